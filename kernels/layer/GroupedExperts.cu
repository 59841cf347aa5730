#include "GroupedExperts.hpp"
#include "LayerKernels.hpp"

namespace moesim::kernels::layer {

#if defined(MOESIM_USE_HIP)

bool grouped_experts_available() {
  return false;
}
GroupedExperts::GroupedExperts(RankState& state) : state_(state) {
  throw std::runtime_error(
      "--experts grouped needs cuBLAS's grouped batched GEMM: use --experts loop on ROCm");
}
GroupedExperts::~GroupedExperts() = default;
void GroupedExperts::run(int) {}
void GroupedExperts::launch(const Projection&, int) {}

#else

bool grouped_experts_available() {
  return true;
}

namespace {
void check_status(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": " + cublasGetStatusString(status));
}
}  // namespace

GroupedExperts::GroupedExperts(RankState& state) : state_(state) {
  const RankShape& d = state.shape;
  const auto hidden = static_cast<int>(d.hidden), ffn = static_cast<int>(d.ffn);
  // Per layer and projection: the weight, input and output pointer of each expert with rows, in the
  // order the loop runs them (rows of expert e follow those of the experts before it).
  std::int64_t first = 0;
  std::vector<std::size_t> experts, firsts;
  for (std::size_t e = 0; e < state.rows.expert_rows.size(); ++e) {
    const std::int64_t n = state.rows.expert_rows[e];
    if (n == 0) continue;
    experts.push_back(e);
    firsts.push_back(static_cast<std::size_t>(first));
    rows_.push_back(static_cast<int>(n));
    first += n;
  }
  total_rows_ = first;
  groups_ = static_cast<int>(rows_.size());
  group_size_.assign(rows_.size(), 1);
  alpha_.assign(rows_.size(), 1.0f);
  beta_.assign(rows_.size(), 0.0f);
  transpose_.assign(rows_.size(), CUBLAS_OP_T);
  keep_.assign(rows_.size(), CUBLAS_OP_N);
  up_.out_width.assign(rows_.size(), 2 * ffn);
  up_.depth.assign(rows_.size(), hidden);
  down_.out_width.assign(rows_.size(), hidden);
  down_.depth.assign(rows_.size(), ffn);
  if (groups_ == 0) return;

  const auto H = static_cast<std::size_t>(hidden), F = static_cast<std::size_t>(ffn);
  std::vector<void*> up_pointers, down_pointers;
  for (const LayerWeights& w : state.weights) {
    for (int table = 0; table < 3; ++table) {
      for (std::size_t g = 0; g < experts.size(); ++g) {
        const std::size_t e = experts[g], row = firsts[g];
        if (table == 0) {
          up_pointers.push_back(w.expert_up + e * 2 * F * H);
          down_pointers.push_back(w.expert_down + e * H * F);
        } else if (table == 1) {
          up_pointers.push_back(state.expert_in.as<bf16_t>() + row * H);
          down_pointers.push_back(state.expert_act.as<bf16_t>() + row * F);
        } else {
          up_pointers.push_back(state.expert_up.as<bf16_t>() + row * 2 * F);
          down_pointers.push_back(state.expert_out.as<bf16_t>() + row * H);
        }
      }
    }
  }
  const auto upload = [&](Projection& p, const std::vector<void*>& pointers) {
    p.pointers = DeviceBuffer(state.device, pointers.size() * sizeof(void*));
    CUDA_CHECK(cudaMemcpy(p.pointers.get(), pointers.data(), p.pointers.bytes(), cudaMemcpyHostToDevice));
  };
  upload(up_, up_pointers);
  upload(down_, down_pointers);
  CUDA_CHECK(cudaSetDevice(state.device));
  check_status(cublasCreate(&handle_), "cublasCreate");
  check_status(cublasSetStream(handle_, state.compute), "cublasSetStream");
}

GroupedExperts::~GroupedExperts() {
  if (handle_ != nullptr) {
    (void)cudaSetDevice(state_.device);
    (void)cublasDestroy(handle_);
  }
}

void GroupedExperts::launch(const Projection& p, int layer) {
  const auto g = static_cast<std::size_t>(groups_);
  void* const* base = p.pointers.as<void*>() + static_cast<std::size_t>(layer) * 3 * g;
  // Row-major Y[rows, N] = X[rows, K]·W[N, K]ᵀ is column-major Yᵀ[N, rows] = op_T(W)·X.
  check_status(
      cublasGemmGroupedBatchedEx(handle_, transpose_.data(), keep_.data(), p.out_width.data(), rows_.data(),
                                 p.depth.data(), alpha_.data(), base, CUDA_R_16BF, p.depth.data(), base + g,
                                 CUDA_R_16BF, p.depth.data(), beta_.data(), base + 2 * g, CUDA_R_16BF,
                                 p.out_width.data(), groups_, group_size_.data(), CUBLAS_COMPUTE_32F),
      "cublasGemmGroupedBatchedEx");
}

void GroupedExperts::run(int layer) {
  if (groups_ == 0) return;
  launch(up_, layer);
  launch_swiglu(state_.expert_up.as<bf16_t>(), state_.expert_act.as<bf16_t>(), total_rows_, state_.shape.ffn,
                state_.compute);
  launch(down_, layer);
}

#endif

}  // namespace moesim::kernels::layer
