#include <cmath>
#include <string>

#include "DeviceFill.hpp"
#include "LayerKernels.hpp"
#include "LayerOps.hpp"

namespace moesim::kernels::layer {
namespace {
constexpr float kEpsilon = 1e-6f;
}

RankRunner::RankRunner(const RunConfig& config, World& world, int rank)
    : config_(config), world_(world), rank_(rank), state_(*world.ranks[static_cast<std::size_t>(rank)]) {
  if (!config.expert_loop) grouped_ = std::make_unique<GroupedExperts>(state_);
}

void RankRunner::configure(ScheduleKind kind, PassMode mode) {
  kind_ = kind;
  mode_ = mode;
}

void RankRunner::gemm(const bf16_t* a, const bf16_t* w, bf16_t* y, std::int64_t m, std::int64_t n,
                      std::int64_t k) {
  if (m == 0) return;
  auto& product = gemms_[{m, n, k}];
  if (!product) {
    MatmulShape shape;
    shape.m = m;
    shape.n = n;
    shape.k = k;  // A [m, k] row-major, weights [n, k] (Y = A·Wᵀ)
    product = std::make_unique<LtMatmul>(state_.handle, shape);
  }
  product->run(a, w, y, state_.workspace.get(), state_.compute);
}

bf16_t* RankRunner::attention_stream(int layer) const {
  if (!farskip() || layer == 0) return state_.x.as<bf16_t>();
  return state_.pb[layer % 2].as<bf16_t>();
}
bf16_t* RankRunner::attention_reduced(int layer) const {
  return state_.pb[farskip() ? (layer + 1) % 2 : 0].as<bf16_t>();
}
bf16_t* RankRunner::moe_reduced(int layer) const {
  return state_.r[farskip() ? layer % 2 : 0].as<bf16_t>();
}

void RankRunner::execute(const Step& step) {
  switch (step.kind) {
    case StepKind::COMPUTE:
      if (mode_ != PassMode::COMM_ONLY) compute(step.layer, step.op);
      break;
    case StepKind::COLLECTIVE:
      collective(step.layer, step.comm);
      break;
    case StepKind::WAIT:
      CUDA_CHECK(cudaStreamWaitEvent(state_.compute, state_.done[event_index(step.layer, step.comm)], 0));
      break;
    case StepKind::HOST_SYNC:
      if (mode_ != PassMode::COMM_ONLY) host_sync();
      break;
  }
}

void RankRunner::compute(int layer, Op op) {
  switch (op) {
    case Op::ATTN_NORM:
    case Op::ATTN_QKV:
    case Op::ATTN_CORE:
    case Op::ATTN_OUT:
      attention_ops(layer, op);
      break;
    case Op::ATTN_RESIDUAL:
    case Op::MOE_RESIDUAL:
      residual(layer, op);
      break;
    default:
      moe_ops(layer, op);
  }
}

void RankRunner::attention_ops(int layer, Op op) {
  RankState& s = state_;
  const RankShape& d = s.shape;
  const LayerWeights& w = s.weights[static_cast<std::size_t>(layer)];
  switch (op) {
    case Op::ATTN_NORM: {
      const bf16_t* input = s.x.as<bf16_t>();
      const bf16_t* extra = nullptr;
      if (allreduce()) {
        input = attention_stream(layer);
        if (farskip() && layer > 0) extra = s.acc.as<bf16_t>();
      } else if (farskip() && layer > 0) {
        input = s.p.as<bf16_t>();  // P_l + S_{l-1}
        if (d.shared_width > 0) extra = s.shared_out.as<bf16_t>();
      }
      launch_rmsnorm(input, extra, nullptr, w.attn_gamma, s.normed.as<bf16_t>(), d.tokens, d.hidden, kEpsilon,
                     s.compute);
      break;
    }
    case Op::ATTN_QKV:
      gemm(s.normed.as<bf16_t>(), w.qkv, s.qkv.as<bf16_t>(), d.tokens, d.qkv_width(), d.hidden);
      break;
    case Op::ATTN_CORE:
      s.attention->run(s.qkv.as<bf16_t>(), s.heads.as<bf16_t>(), s.workspace.get(), s.compute);
      break;
    default: {  // ATTN_OUT: local rows of the projection in allreduce mode (a partial sum)
      bf16_t* out = allreduce() ? attention_reduced(layer) : s.attn_out.as<bf16_t>();
      gemm(s.heads.as<bf16_t>(), w.out, out, d.tokens, d.hidden, d.attn_width());
    }
  }
}

void RankRunner::residual(int layer, Op op) {
  RankState& s = state_;
  const float share = 1.0f / static_cast<float>(config_.gpus);
  if (!allreduce()) {
    // ATTN: P = X + attn (farskip: P_{l+1} = X_l + attn_l). MOE: X = P + M.
    const bf16_t* add = op == Op::ATTN_RESIDUAL ? s.attn_out.as<bf16_t>() : s.moe_out.as<bf16_t>();
    const bf16_t* base = op == Op::ATTN_RESIDUAL ? s.x.as<bf16_t>() : s.p.as<bf16_t>();
    bf16_t* out = op == Op::ATTN_RESIDUAL ? s.p.as<bf16_t>() : s.x.as<bf16_t>();
    launch_add(base, add, out, th(), 1.0f, s.compute);
    return;
  }
  if (op == Op::ATTN_RESIDUAL) {  // each rank adds 1/G of the residual, so the sum adds it once
    bf16_t* partial = attention_reduced(layer);
    launch_add(partial, attention_stream(layer), partial, th(), share, s.compute);
  } else if (!farskip()) {
    launch_add(attention_reduced(layer), moe_reduced(layer), s.x.as<bf16_t>(), th(), 1.0f, s.compute);
  } else if (layer == 0) {
    CUDA_CHECK(cudaMemsetAsync(s.acc.get(), 0, th() * 2, s.compute));
  } else {
    launch_add(s.acc.as<bf16_t>(), moe_reduced(layer - 1), s.acc.as<bf16_t>(), th(), 1.0f, s.compute);
  }
}

void RankRunner::moe_ops(int layer, Op op) {
  RankState& s = state_;
  const RankShape& d = s.shape;
  const LayerWeights& w = s.weights[static_cast<std::size_t>(layer)];
  switch (op) {
    case Op::MLP_NORM: {
      const bf16_t* input = s.p.as<bf16_t>();
      const bf16_t *a = nullptr, *b = nullptr;
      if (!allreduce() && farskip()) input = s.x.as<bf16_t>();  // X_l: skips attention_l
      if (allreduce()) input = farskip() ? attention_stream(layer) : attention_reduced(layer);
      if (allreduce() && farskip() && layer > 0) {
        a = s.acc.as<bf16_t>();
        b = moe_reduced(layer - 1);
      }
      launch_rmsnorm(input, a, b, w.mlp_gamma, s.normed.as<bf16_t>(), d.tokens, d.hidden, kEpsilon,
                     s.compute);
      break;
    }
    case Op::GATE:
      CUDA_CHECK(cudaMemsetAsync(s.counts.get(), 0, s.counts.bytes(), s.compute));
      gemm(s.normed.as<bf16_t>(), w.gate, s.logits.as<bf16_t>(), d.tokens, d.experts, d.hidden);
      launch_gate_topk(s.logits.as<bf16_t>(), s.top_index.as<int>(), s.top_weight.as<float>(),
                       s.counts.as<int>(), d.tokens, static_cast<int>(d.experts), static_cast<int>(d.top_k),
                       s.compute);
      break;
    case Op::PERMUTE:
      launch_gather_rows(s.normed.as<bf16_t>(), s.permute_source.as<int>(),
                         allreduce() ? s.expert_in.as<bf16_t>() : s.send.as<bf16_t>(), s.rows.permuted,
                         d.hidden, s.compute);
      break;
    case Op::ROUTED_EXPERTS:
      routed_experts(layer);
      break;
    case Op::SHARED_EXPERTS:
      shared_experts(layer);
      break;
    default: {  // UNPERMUTE
      const bf16_t* rows =
          allreduce() ? s.expert_out.as<bf16_t>() : s.combine_recv.at(slot(layer)).as<bf16_t>();
      const bf16_t* extra =
          !allreduce() && d.shared_width > 0 && !identity_ ? s.shared_out.as<bf16_t>() : nullptr;
      bf16_t* out = allreduce() ? moe_reduced(layer) : s.moe_out.as<bf16_t>();
      launch_unpermute(rows, s.slot_position.as<int>(), s.slot_weight.as<float>(), extra, out, d.tokens,
                       d.hidden, static_cast<int>(d.top_k), s.compute);
    }
  }
}

// alltoall: regroup received rows per local expert, run each non-empty expert, regroup back in
// source order for Combine. allreduce: PERMUTE already wrote the local rows expert by expert.
void RankRunner::routed_experts(int layer) {
  RankState& s = state_;
  const RankShape& d = s.shape;
  const LayerWeights& w = s.weights[static_cast<std::size_t>(layer)];
  if (!allreduce())
    launch_gather_rows(s.dispatch_recv.at(slot(layer)).as<bf16_t>(), s.regroup_source.as<int>(),
                       s.expert_in.as<bf16_t>(), s.rows.received, d.hidden, s.compute);
  if (identity_) {
    if (s.rows.received > 0)
      CUDA_CHECK(cudaMemcpyAsync(s.expert_out.get(), s.expert_in.get(),
                                 static_cast<std::size_t>(s.rows.received * d.hidden) * 2,
                                 cudaMemcpyDeviceToDevice, s.compute));
  } else {
    expert_mlps(layer, /*loop=*/grouped_ == nullptr);
  }
  if (!allreduce())
    launch_gather_rows(s.expert_out.as<bf16_t>(), s.ungroup_source.as<int>(), s.combine_send.as<bf16_t>(),
                       s.rows.received, d.hidden, s.compute);
}

void RankRunner::expert_mlps(int layer, bool loop) {
  RankState& s = state_;
  const RankShape& d = s.shape;
  const LayerWeights& w = s.weights[static_cast<std::size_t>(layer)];
  if (!loop) {
    grouped_->run(layer);
    return;
  }
  std::int64_t first = 0;
  for (std::size_t e = 0; e < s.rows.expert_rows.size(); ++e) {
    const std::int64_t n = s.rows.expert_rows[e];
    if (n == 0) continue;  // an expert with no rows launches nothing
    const auto row = static_cast<std::size_t>(first);
    gemm(s.expert_in.as<bf16_t>() + row * static_cast<std::size_t>(d.hidden),
         w.expert_up + e * static_cast<std::size_t>(2 * d.ffn * d.hidden), s.expert_up.as<bf16_t>(), n,
         2 * d.ffn, d.hidden);
    launch_swiglu(s.expert_up.as<bf16_t>(), s.expert_act.as<bf16_t>(), n, d.ffn, s.compute);
    gemm(s.expert_act.as<bf16_t>(), w.expert_down + e * static_cast<std::size_t>(d.hidden * d.ffn),
         s.expert_out.as<bf16_t>() + row * static_cast<std::size_t>(d.hidden), n, d.hidden, d.ffn);
    first += n;
  }
}

std::string RankRunner::compare_grouped_with_loop() {
  if (!grouped_ || state_.rows.received == 0) return "";
  RankState& s = state_;
  const std::size_t values = static_cast<std::size_t>(s.rows.received * s.shape.hidden);
  fill_random(s.expert_in.get(), DataType::BF16, values,
              config_.seed + 77u + static_cast<std::uint64_t>(rank_), 1.0f, s.compute);
  std::vector<bf16_t> loop(values), grouped(values);
  expert_mlps(0, /*loop=*/true);
  CUDA_CHECK(cudaMemcpyAsync(loop.data(), s.expert_out.get(), values * 2, cudaMemcpyDeviceToHost, s.compute));
  expert_mlps(0, /*loop=*/false);
  CUDA_CHECK(
      cudaMemcpyAsync(grouped.data(), s.expert_out.get(), values * 2, cudaMemcpyDeviceToHost, s.compute));
  CUDA_CHECK(cudaStreamSynchronize(s.compute));
  double squares = 0;
  for (bf16_t v : loop) squares += static_cast<double>(bf16_to_float(v)) * bf16_to_float(v);
  const double rms = std::sqrt(squares / static_cast<double>(values));
  for (std::size_t i = 0; i < values; ++i) {
    const double a = bf16_to_float(loop[i]), b = bf16_to_float(grouped[i]);
    // Both accumulate in fp32 and round to bf16, but may sum in another order: a few bf16 ulps of the
    // value, or of the typical value where outputs cancel to near zero.
    if (!(std::fabs(a - b) <= 2e-2 * std::fabs(a) + 1e-2 * rms))
      return "rank " + std::to_string(rank_) + " expert output " + std::to_string(i) + ": grouped " +
             std::to_string(b) + ", loop " + std::to_string(a);
  }
  return "";
}

void RankRunner::shared_experts(int layer) {
  RankState& s = state_;
  const RankShape& d = s.shape;
  if (d.shared_width == 0 || identity_) return;
  const LayerWeights& w = s.weights[static_cast<std::size_t>(layer)];
  gemm(s.normed.as<bf16_t>(), w.shared_up, s.shared_up.as<bf16_t>(), d.tokens, 2 * d.shared_width, d.hidden);
  launch_swiglu(s.shared_up.as<bf16_t>(), s.shared_act.as<bf16_t>(), d.tokens, d.shared_width, s.compute);
  gemm(s.shared_act.as<bf16_t>(), w.shared_down, s.shared_out.as<bf16_t>(), d.tokens, d.hidden,
       d.shared_width);
  // allreduce: the shared slice's partial sum joins the routed partial before MOE_ALLREDUCE.
  if (allreduce())
    launch_add(moe_reduced(layer), s.shared_out.as<bf16_t>(), moe_reduced(layer), th(), 1.0f, s.compute);
}

void RankRunner::collective(int layer, Comm comm) {
  RankState& s = state_;
  CUDA_CHECK(cudaEventRecord(s.ready, s.compute));  // the data it sends were made by the last compute kernel
  CUDA_CHECK(cudaStreamWaitEvent(s.comm, s.ready, 0));
  const std::size_t event = event_index(layer, comm);
  if (comm == Comm::DISPATCH || comm == Comm::COMBINE) {
    const AllToAllView view = alltoall_view(s, comm, slot(layer));
    if (mode_ == PassMode::COMPUTE_ONLY) {
      local_copy_alltoall(view, s.comm);
    } else if (kind_ == ScheduleKind::FARSKIP_CE) {
      copy_engine_alltoall(world_, rank_, comm, slot(layer), event);
    } else {
      nccl_alltoall(view, world_.comms[static_cast<std::size_t>(rank_)], s.comm);
    }
  } else {
    bf16_t* data = comm == Comm::ATTN_ALLREDUCE ? attention_reduced(layer) : moe_reduced(layer);
    if (mode_ == PassMode::COMPUTE_ONLY) {
      CUDA_CHECK(cudaMemcpyAsync(s.scratch.get(), data, th() * 2, cudaMemcpyDeviceToDevice, s.comm));
    } else {
      nccl_allreduce(data, th(), world_.comms[static_cast<std::size_t>(rank_)], s.comm);
    }
  }
  CUDA_CHECK(cudaEventRecord(s.done[event], s.comm));
}

// Megatron's alltoall dispatcher copies the per-expert counts to the host to size its buffers.
void RankRunner::host_sync() {
  RankState& s = state_;
  CUDA_CHECK(cudaMemcpyAsync(s.host_counts, s.counts.get(), static_cast<std::size_t>(s.shape.experts) * 4,
                             cudaMemcpyDeviceToHost, s.compute));
  CUDA_CHECK(cudaStreamSynchronize(s.compute));
}

void RankRunner::join() {
  CUDA_CHECK(cudaEventRecord(state_.ready, state_.comm));
  CUDA_CHECK(cudaStreamWaitEvent(state_.compute, state_.ready, 0));
}

std::vector<const DeviceBuffer*> RankRunner::final_outputs() const {
  if (!allreduce() || !farskip()) return {&state_.x};
  const int last = config_.layers - 1;
  return {&state_.pb[config_.layers % 2], &state_.acc, &state_.r[last % 2]};
}

}  // namespace moesim::kernels::layer
