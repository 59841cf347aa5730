#include "moesim/schedules/CostModel.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "moesim/common/Error.hpp"

namespace moesim::schedules {

namespace {
constexpr double kTile =
    128;  // output tile edge of the GEMM kernels the efficiency tables were measured with

hw::CollectiveKind to_hw(sim::CollectiveKind kind) {
  switch (kind) {
    case sim::CollectiveKind::ALL_TO_ALL:
      return hw::CollectiveKind::ALL_TO_ALL;
    case sim::CollectiveKind::ALL_REDUCE:
      return hw::CollectiveKind::ALL_REDUCE;
    case sim::CollectiveKind::ALL_GATHER:
      return hw::CollectiveKind::ALL_GATHER;
    case sim::CollectiveKind::REDUCE_SCATTER:
      return hw::CollectiveKind::REDUCE_SCATTER;
  }
  return hw::CollectiveKind::ALL_TO_ALL;
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
  const auto pass = cost.name.find(".dgrad") != std::string::npos ? hw::AttentionPass::BACKWARD
                                                                  : hw::AttentionPass::FORWARD;
  switch (cost.kind) {
    case KernelClass::GEMM:
      rate = hw.achieved_gemm_flops(dt, g.m, g.n, g.k);
      break;
    case KernelClass::GROUPED_GEMM:
      rate = hw.sustained_peak_flops(dt) * hw.grouped_gemm_efficiency(g.m, g.n, g.k, g.groups) *
             hw.gemm_dtype_factor(dt);
      break;
    case KernelClass::ATTENTION:
      rate = hw.sustained_peak_flops(dt) *
             hw.attention_efficiency(std::max<std::int64_t>(cost.attn_seq, 1), pass, attention);
      break;
    case KernelClass::MEMORY:
      break;
  }
  if (cost.flops > 0 && rate > 0) {
    w.compute_ns = cost.flops / rate * 1e9;
    w.peak_ns = cost.flops / hw.peak_flops(dt) * 1e9;
  }
  w.hbm_bytes = cost.bytes;
  if (cost.kind == KernelClass::ATTENTION && attention == hw::AttentionImpl::UNFUSED &&
      pass == hw::AttentionPass::FORWARD && w.compute_ns > 0) {
    // Unfused attention writes and re-reads the full L×L scores (fp32, then bf16 probabilities): its
    // measured time (8.7 ms per layer for 4 x 32 heads x 4096^2 on an H200) is mostly the softmax pass,
    // whose QK^T and PV GEMMs take ~1.6 ms. That pass is not HBM-saturating: it slows with the SMs a
    // comm kernel takes (the layer runner's NCCL Dispatch beside it cost 1.76 ms over 4 Qwen3 layers at
    // T16384, where only the GEMMs slowing would give 0.25). So its whole time is both SM-bound and
    // HBM-bound: either resource lost stretches it.
    w.memory_ns = w.compute_ns;
    // Its HBM traffic is not in cost.bytes (the scores never leave the chip when fused): at the rate of
    // a large copy for its HBM-bound time, which is what draws its power.
    w.hbm_bytes = std::max(w.hbm_bytes, w.memory_ns * 1e-9 * hw.gpu.hbm_bw_Bps * hw.memory_efficiency(1e9));
  }
  if (cost.kind == KernelClass::GEMM || cost.kind == KernelClass::GROUPED_GEMM) {
    double tiles = std::ceil(static_cast<double>(g.m) / kTile) * std::ceil(static_cast<double>(g.n) / kTile) *
                   static_cast<double>(std::max<std::int64_t>(g.groups, 1));
    w.sm_fraction = std::clamp(tiles / hw.gpu.sm_count, 1.0 / hw.gpu.sm_count, 1.0);
  }
  return w;
}

namespace {
double blas_launch_ns(const hw::HwProfile& hw) {
  return hw.gpu.blas_call_overhead_s > 0 ? hw.gpu.blas_call_overhead_s * 1e9 : launch_ns(hw);
}
}  // namespace

std::vector<KernelPiece> unfused_attention_pieces(const hw::HwProfile& hw, const models::KernelCost& cost,
                                                  models::DType dtype, std::int64_t head_sequences) {
  const sim::KernelWork whole = kernel_work(hw, cost, dtype, hw::AttentionImpl::UNFUSED);
  const std::string dt = models::to_string(dtype);
  // kernels/common/AttentionForward.cu: the largest divisor of B·H whose scores fit the budget.
  constexpr double kScoreBudgetBytes = 2.0 * 1024 * 1024 * 1024;
  const double per_head = static_cast<double>(cost.attn_seq) * static_cast<double>(cost.attn_seq) * (4 + 2);
  const std::int64_t heads = std::max<std::int64_t>(head_sequences, 1);
  std::int64_t chunk = 1;
  for (std::int64_t c = heads; c >= 1; --c) {
    if (heads % c == 0 && static_cast<double>(c) * per_head <= kScoreBudgetBytes) {
      chunk = c;
      break;
    }
  }
  const auto chunks = static_cast<double>(heads / chunk);
  const double gemm_rate = hw.achieved_gemm_flops(dt, cost.attn_seq, cost.attn_seq, cost.attn_head_dim);
  const double total = whole.compute_ns;
  // At most half the time goes to the two GEMMs, so the softmax pass always keeps the larger share.
  const double gemm_ns = gemm_rate > 0 ? std::min(0.5 * total, 2.0 * cost.flops / gemm_rate * 1e9) : 0.0;
  const double blas = blas_launch_ns(hw);
  std::vector<KernelPiece> pieces;
  for (std::int64_t i = 0; i < heads / chunk; ++i) {
    for (const char* part : {"qk", "softmax", "pv"}) {
      KernelPiece piece;
      piece.name = cost.name + ".c" + std::to_string(i) + "." + part;
      sim::KernelWork& w = piece.work;
      w.fixed_ns = whole.fixed_ns;
      const bool gemm = std::string(part) != "softmax";
      const double ns = (gemm ? gemm_ns / 2 : total - gemm_ns) / chunks;
      w.compute_ns = ns;
      w.memory_ns = gemm ? 0.0 : ns;  // the softmax pass is where the score traffic is
      w.peak_ns = gemm ? whole.peak_ns / 2 / chunks : 0.0;
      w.hbm_bytes = whole.hbm_bytes * ns / total;
      piece.launch_ns = gemm ? blas : launch_ns(hw);
      pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

std::optional<sim::PowerModel> power_model(const hw::HwProfile& hw) {
  if (!hw.power.present) return std::nullopt;
  const hw::PowerSpec& p = hw.power;
  return sim::PowerModel{p.limit_w,        p.idle_w,          p.compute_w_at_peak,
                         p.hbm_j_per_byte, p.link_j_per_byte, p.speed_exponent};
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

sim::Platform make_platform(const hw::HwProfile& hw, int nodes) {
  sim::Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = hw.node.gpus_per_node;
  const auto& fabric = hw.node.fabric;
  topo.fabric = fabric.type == hw::FabricType::MESH ? sim::FabricType::MESH : sim::FabricType::SWITCH;
  topo.gpu_port_Bps = fabric.usable_link_bw_Bps * fabric.links_per_gpu;
  topo.mesh_link_Bps = fabric.usable_link_bw_Bps;
  if (nodes > 1) {
    if (hw.network.nics_per_node < 1)
      throw ScheduleError("profile '" + hw.name + "' has no NICs: use --nodes 1");
    topo.gpus_per_nic = std::max(1, hw.node.gpus_per_node / hw.network.nics_per_node);
    topo.nic_Bps = hw.network.nic_usable_bw_Bps;
  }
  sim::GpuResources gpu;
  gpu.sm_count = hw.gpu.sm_count;
  gpu.comm_sms = hw.contention.comm_sms;
  gpu.compute_slowdown_with_comm = hw.contention.compute_slowdown_with_comm;
  gpu.comm_slowdown_with_compute = hw.contention.comm_slowdown_with_compute;
  gpu.hbm_interference = hw.contention.hbm_interference;
  gpu.compute_slowdown_with_copy = hw.contention.compute_slowdown_with_copy;
  auto profile = std::make_shared<const hw::HwProfile>(hw);
  auto cost = [profile](const sim::CollectiveQuery& q) {
    auto scope = q.spans_nodes ? hw::CollectiveScope::INTER : hw::CollectiveScope::INTRA;
    auto kind = to_hw(q.kind);
    const bool ce = q.transport == sim::Transport::COPY_ENGINE;
    if (!profile->has_collective(kind, scope, ce)) {
      throw ScheduleError("profile '" + profile->name + "' has no " + (ce ? "copy-engine " : "") +
                          hw::to_string(kind) + " table for " + hw::to_string(scope) + "-node groups");
    }
    return sim::CollectiveCost{profile->busbw_Bps(kind, q.group_size, scope, std::max(q.bytes, 1.0), ce),
                               profile->step_latency_s(kind, q.group_size, scope, ce) * 1e9};
  };
  return sim::make_platform(topo, gpu, cost);
}

}  // namespace moesim::schedules
