#include <stdexcept>

#include "GroupedExperts.hpp"
#include "LayerKernels.hpp"

namespace moesim::kernels::layer {

#if defined(MOESIM_USE_HIP)

GroupedExperts::GroupedExperts(RankState& state) : state_(state) {
  throw std::runtime_error(
      "--experts grouped needs cuBLAS's grouped batched GEMM: use --experts loop on ROCm");
}
GroupedExperts::~GroupedExperts() = default;
void GroupedExperts::run(int) {}

#else

GroupedExperts::GroupedExperts(RankState& state) : state_(state) {
  const RankShape& d = state.shape;
  const auto H = static_cast<std::size_t>(d.hidden), F = static_cast<std::size_t>(d.ffn);
  // The experts with rows, in the order the loop runs them (rows of expert e follow the experts before it).
  std::vector<std::size_t> experts, firsts;
  std::vector<int> rows;
  for (std::size_t e = 0; e < state.rows.expert_rows.size(); ++e) {
    const std::int64_t n = state.rows.expert_rows[e];
    if (n == 0) continue;
    experts.push_back(e);
    firsts.push_back(static_cast<std::size_t>(total_rows_));
    rows.push_back(static_cast<int>(n));
    total_rows_ += n;
  }
  if (rows.empty()) return;
  CUDA_CHECK(cudaSetDevice(state.device));
  up_ = std::make_unique<Projection>(state.compute);
  down_ = std::make_unique<Projection>(state.compute);
  up_->gemm.set_shapes(rows, static_cast<int>(2 * F), static_cast<int>(H));
  down_->gemm.set_shapes(rows, static_cast<int>(H), static_cast<int>(F));
  std::vector<void*> up, down;  // per layer: weights, inputs, outputs of every expert with rows
  for (const LayerWeights& w : state.weights) {
    for (std::size_t e : experts) up.push_back(w.expert_up + e * 2 * F * H);
    for (std::size_t row : firsts) up.push_back(state.expert_in.as<bf16_t>() + row * H);
    for (std::size_t row : firsts) up.push_back(state.expert_up.as<bf16_t>() + row * 2 * F);
    for (std::size_t e : experts) down.push_back(w.expert_down + e * H * F);
    for (std::size_t row : firsts) down.push_back(state.expert_act.as<bf16_t>() + row * F);
    for (std::size_t row : firsts) down.push_back(state.expert_out.as<bf16_t>() + row * H);
  }
  up_->tables = upload_pointer_table(state.device, up);
  down_->tables = upload_pointer_table(state.device, down);
}

GroupedExperts::~GroupedExperts() {
  (void)cudaSetDevice(state_.device);  // the cuBLAS handles belong to this rank's GPU
}

void GroupedExperts::run(int layer) {
  if (!up_) return;
  const auto offset = static_cast<std::size_t>(layer) * 3 * static_cast<std::size_t>(up_->gemm.groups());
  up_->gemm.run(up_->tables.as<void*>() + offset);
  launch_swiglu(state_.expert_up.as<bf16_t>(), state_.expert_act.as<bf16_t>(), total_rows_, state_.shape.ffn,
                state_.compute);
  down_->gemm.run(down_->tables.as<void*>() + offset);
}

#endif

}  // namespace moesim::kernels::layer
