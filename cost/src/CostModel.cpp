#include "moesim/cost/CostModel.hpp"

#include <algorithm>
#include <cmath>

#include "moesim/common/Error.hpp"
#include "moesim/models/LayerOps.hpp"

namespace moesim::cost {

namespace {
/**
 * The causal self-attention length with as many score pairs per sequence and head as the kernel:
 * L^2 / 2 = its pairs (seq x prefix + seq^2 / 2 without a window). The efficiency curves are over causal L,
 * and their rate follows the work (hwprofiles: equal_work_seq), so a decode step (1 query, 2,000 cached
 * keys) reads the curve at the work it does, not at a length of 1.
 */
std::int64_t causal_equivalent_seq(const models::KernelCost& cost) {
  const double pairs = cost.attn_score_pairs > 0
                           ? cost.attn_score_pairs
                           : models::attention_score_pairs(std::max<std::int64_t>(cost.attn_seq, 1),
                                                           std::max<std::int64_t>(cost.attn_prefix, 0),
                                                           models::AttentionWindow::FULL, 0);
  return std::llround(std::sqrt(2.0 * pairs));
}
}  // namespace

sim::KernelWork kernel_work(const hw::HwProfile& hw, const models::KernelCost& cost, models::DType dtype,
                            hw::AttentionImpl attention) {
  using models::KernelClass;
  const std::string dt = models::to_string(dtype);
  sim::KernelWork w;
  w.fixed_ns = hw.gpu.kernel_min_s * 1e9;
  if (cost.bytes > 0) w.memory_ns = cost.bytes / (hw.gpu.hbm_bw_Bps * hw.memory_efficiency(cost.bytes)) * 1e9;
  const auto& g = cost.gemm;
  double rate = 0;
  const auto pass = cost.backward ? hw::AttentionPass::BACKWARD : hw::AttentionPass::FORWARD;
  switch (cost.kind) {
    case KernelClass::GEMM:
      rate = hw.achieved_gemm_flops(dt, g.m, g.n, g.k);
      break;
    case KernelClass::GROUPED_GEMM:
      rate = hw.sustained_peak_flops(dt) * hw.grouped_gemm_efficiency(g.m, g.n, g.k, g.groups) *
             hw.gemm_dtype_factor(dt);
      break;
    case KernelClass::ATTENTION: {
      const std::int64_t seq = causal_equivalent_seq(cost);
      rate =
          hw.sustained_peak_flops(dt) * hw.attention_efficiency(seq, pass, attention, cost.attn_batch_heads);
      // A window's rows are shorter than those of the causal kernels the curve measured at that work.
      if (attention == hw::AttentionImpl::FUSED)
        rate *= hw.attention_row_factor(seq, cost.attn_batch_heads, cost.attn_row_keys);
      break;
    }
    case KernelClass::MEMORY:
      w.memory_comm_slowdown = hw.contention.memory_slowdown_with_comm;
      break;
    case KernelClass::ROUTER_TOPK:
      break;
  }
  if (cost.flops > 0 && rate > 0) {
    w.compute_ns = cost.flops / rate * 1e9;
    w.peak_ns = cost.flops / hw.peak_flops(dt) * 1e9;
  }
  w.hbm_bytes = cost.bytes;
  if (cost.kind == KernelClass::GEMM || cost.kind == KernelClass::GROUPED_GEMM) {
    w.sm_fraction = hw::gemm_sm_fraction(g.m, g.n, g.groups, hw.gpu.sm_count);
    w.comm_slowdown = hw.gemm_slowdown_with_comm(w.compute_ns * 1e-9);
  }
  if (cost.kind == KernelClass::ROUTER_TOPK) {
    if (const auto router = hw.router_topk(cost.route.tokens, cost.route.top_k)) {
      // Latency-bound on the SMs: the measured time is compute time (kernel_min already in fixed_ns); its
      // bytes only share the HBM.
      w.compute_ns = std::max(0.0, router->time_s * 1e9 - w.fixed_ns);
      w.memory_ns = cost.bytes / streaming_hbm_Bps(hw) * 1e9;
      w.comm_slowdown = router->comm_slowdown;
      w.comm_drag = router->comm_drag;
    }
  }
  return w;
}

namespace {
double blas_launch_ns(const hw::HwProfile& hw) {
  return hw.gpu.blas_call_overhead_s > 0 ? hw.gpu.blas_call_overhead_s * 1e9 : launch_ns(hw);
}
}  // namespace

double streaming_hbm_Bps(const hw::HwProfile& hw) {
  const auto& curve = hw.efficiency.memory.value;
  const double best =
      curve.empty() ? hw.memory_efficiency(1e9) : *std::max_element(curve.begin(), curve.end());
  return hw.gpu.hbm_bw_Bps * best;
}

/*
 * Unfused attention as the layer runner runs it (kernels/common/AttentionForward.cu): chunks of
 * head-sequences whose scores fit a 2 GiB budget, each a QK^T GEMM that writes fp32 scores, a causal
 * softmax that reads the unmasked half and writes bf16 probabilities, and a PV GEMM that reads them.
 * The calibrated time of the whole is shared out: each GEMM takes the longer of its full-square FLOPs
 * at the GEMM table's rate and its score traffic at streaming HBM bandwidth (QK^T is HBM-bound at head
 * dim 128); the softmax, which contention_bench shows running at ~40% of the HBM bandwidth and slowing
 * with lost SMs rather than with HBM traffic, keeps the rest (at least half).
 */
std::vector<KernelPiece> unfused_attention_pieces(const hw::HwProfile& hw, const models::KernelCost& cost,
                                                  models::DType dtype, std::int64_t head_sequences) {
  const sim::KernelWork whole = kernel_work(hw, cost, dtype, hw::AttentionImpl::UNFUSED);
  const std::string dt = models::to_string(dtype);
  constexpr double kScoreBudgetBytes = 2.0 * 1024 * 1024 * 1024;
  const double seq = static_cast<double>(cost.attn_seq);
  const double per_head = seq * seq * (4 + 2);
  const std::int64_t heads = std::max<std::int64_t>(head_sequences, 1);
  std::int64_t chunk = 1;
  for (std::int64_t c = heads; c >= 1; --c) {
    if (heads % c == 0 && static_cast<double>(c) * per_head <= kScoreBudgetBytes) {
      chunk = c;
      break;
    }
  }
  const auto chunks = static_cast<double>(heads / chunk);
  const double squares = seq * seq * static_cast<double>(chunk);  // score elements per chunk
  const double qk_bytes = 4 * squares, softmax_bytes = 2 * squares + 2 * squares, pv_bytes = 2 * squares;
  const double stream = streaming_hbm_Bps(hw);
  const double total = whole.compute_ns / chunks;
  const double gemm_rate = hw.achieved_gemm_flops(dt, cost.attn_seq, cost.attn_seq, cost.attn_head_dim);
  // cost.flops counts the causal half of QK^T and PV; the runner's GEMMs compute full squares.
  const double gemm_compute = gemm_rate > 0 ? cost.flops / chunks / gemm_rate * 1e9 : 0.0;
  const double qk_memory = qk_bytes / stream * 1e9, pv_memory = pv_bytes / stream * 1e9;
  const double gemms = std::max(gemm_compute, qk_memory) + std::max(gemm_compute, pv_memory);
  const double scale = gemms > 0 ? std::min(1.0, 0.5 * total / gemms) : 0.0;
  const double softmax_ns = total - scale * gemms;
  const double blas = blas_launch_ns(hw);
  std::vector<KernelPiece> pieces;
  for (std::int64_t i = 0; i < heads / chunk; ++i) {
    for (const char* part : {"qk", "softmax", "pv"}) {
      KernelPiece piece;
      piece.name = cost.name + ".c" + std::to_string(i) + "." + part;
      sim::KernelWork& w = piece.work;
      w.fixed_ns = whole.fixed_ns;
      const std::string name = part;
      if (name == "softmax") {
        w.compute_ns = softmax_ns;
        w.memory_ns = std::min(softmax_ns, softmax_bytes / stream * 1e9);
        w.hbm_bytes = softmax_bytes;
      } else {
        w.compute_ns = scale * gemm_compute;
        w.memory_ns = scale * (name == "qk" ? qk_memory : pv_memory);
        w.peak_ns = whole.peak_ns / 2 / chunks;
        w.hbm_bytes = name == "qk" ? qk_bytes : pv_bytes;
      }
      piece.launch_ns = name == "softmax" ? launch_ns(hw) : blas;
      pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

double launch_ns(const hw::HwProfile& hw) {
  return hw.gpu.launch_overhead_s * 1e9;
}

double copy_launch_ns(const hw::HwProfile& hw) {
  return hw.gpu.copy_launch_overhead_s > 0 ? hw.gpu.copy_launch_overhead_s * 1e9 : launch_ns(hw);
}

double launch_ns(const hw::HwProfile& hw, const models::KernelCost& cost) {
  const bool blas = cost.kind == models::KernelClass::GEMM || cost.kind == models::KernelClass::GROUPED_GEMM;
  return blas ? blas_launch_ns(hw) : launch_ns(hw);
}

}  // namespace moesim::cost
