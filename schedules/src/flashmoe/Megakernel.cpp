// The `megakernel` schedule: FlashMoE's whole distributed MoE layer as one persistent kernel per GPU.
#include <algorithm>
#include <cmath>

#include "FlashMoePlan.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/cost/CostModel.hpp"
#include "moesim/schedules/FlashMoe.hpp"

namespace moesim::schedules::detail {

/*
 * One persistent kernel per GPU (FlashMoE §3, Algorithm 1, Figure 6), at tile granularity:
 *
 *   rank s: gate tiles ──► Dispatch packet (s, e) ──one-sided put──► rank d = owner(e)
 *   rank d:   GEMM0 tiles (bM x bN over I) ──join──► GEMM1 tiles (bM x bN over H) ──put──► rank s
 *   rank s:   combine tiles (bM x bN over H) of every returned row tile
 *
 * Tasks take one of the kernel's blocks−1 processors for max(compute, memory) at 1/SMs of the GPU, plus
 * the measured per-task dispatch cost of a persistent kernel's device queue. Transfers are flows over the
 * NVLink ports; none waits for a collective barrier. Combine puts carry a whole row tile (all H/bN
 * output tiles of GEMM1): the paper sends each tile on its own, so this starts a row's return at most one
 * GEMM1 tile later than FlashMoE would.
 */
namespace {

/**
 * Per-task dispatch cost of a persistent kernel: data/calibration/2026-11-21-nvidia-h100-x1/persistent.log,
 * `queue` at 132 blocks and work 0: 282.7 us for 65536 tasks = 569.3 ns per task seen by one block.
 */
constexpr int kDispatchNsDefault = 569;

/** Every expert tile task of the one MoE layer a megakernel program holds. */
const sim::OpOrigin kExperts{0, false, "routed_experts"};

struct TileTimer {
  double sm_count = 1;
  double hbm_Bps_per_sm = 1;
  double dispatch_ns = 0;
  double tile_m = 128;
  const hw::HwProfile* hw = nullptr;
  std::string math;
  /**
   * A tile of a GEMM (m x n x k overall): its FLOPs at 1/SMs of the GPU's rate for many waves of such tiles,
   * and its share of the GEMM's HBM bytes at 1/SMs of the bandwidth. The rate is the profile's measured
   * tile-task rate (efficiency.tile_gemm) where it has one for the math, else the efficiency table's rate
   * of one full wave of tiles (a GEMM of tile_m·SMs rows). A partly filled tile costs a full one.
   */
  double gemm(double tile_flops, std::int64_t m, std::int64_t n, std::int64_t k, double tiles, int element,
              int groups) const {
    const auto wave_rows = static_cast<std::int64_t>(tile_m * sm_count);
    const double rate =
        hw->tile_gemm_flops(math).value_or(hw->achieved_gemm_flops(math, wave_rows, n, k)) / sm_count;
    const double bytes =
        (static_cast<double>(m) * k + static_cast<double>(k) * n * groups + static_cast<double>(m) * n) *
        element / std::max(tiles, 1.0);
    return std::max(tile_flops / rate, bytes / hbm_Bps_per_sm) * 1e9 + dispatch_ns;
  }
  double memory(double bytes) const { return bytes / hbm_Bps_per_sm * 1e9 + dispatch_ns; }
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

namespace {

/** Emits the tile DAG of every rank; one call per phase keeps each step readable. */
class MegakernelBuilder {
 public:
  explicit MegakernelBuilder(const Scenario& s) : s_(s) {
    const auto& hw = s.hw;
    blocks_ = option_int(s, "blocks", hw.gpu.sm_count, 2, hw.gpu.sm_count);
    bm_ = option_int(s, "tile_m", 128, 16, 1024);
    bn_ = option_int(s, "tile_n", 64, 16, 1024);
    padded_ = option_choice(s, "payload", {"efficient", "padded"}) == "padded";
    const std::string math = option_choice(s, "math", {"dtype", "tf32"});
    p_ = plan_flash(s, padded_);
    timer_.sm_count = hw.gpu.sm_count;
    timer_.hbm_Bps_per_sm = hw.gpu.hbm_bw_Bps * hw.memory_efficiency(1e9) / hw.gpu.sm_count;
    timer_.dispatch_ns = option_int(s, "task_ns", kDispatchNsDefault, 0, 1000000);
    timer_.tile_m = bm_;
    timer_.hw = &hw;
    timer_.math = math == "tf32" ? "tf32" : models::to_string(s.workload.dtype);
    latency_ns_ = hw.node.fabric.latency_s * 1e9;
    sim::check_op_count(op_count());
    out_.program = std::make_shared<sim::Program>(p_.ep, false);
    rows_at_.assign(static_cast<std::size_t>(p_.ep), 0);
    for (int src = 0; src < p_.ep; ++src) {
      for (int e = 0; e < p_.experts; ++e)
        rows_at_[static_cast<std::size_t>(p_.owner(e))] += p_.rows_to(src, e);
    }
  }

  FlashBuilt build() {
    for (int r = 0; r < p_.ep; ++r) add_pool_and_gate(r);
    for (int src = 0; src < p_.ep; ++src) {
      for (int e = 0; e < p_.experts; ++e) add_expert_packet(src, e);
    }
    const double combine_ns = timer_.memory(3.0 * bm_ * bn_ * p_.element);
    for (const auto& [put, src] : returned_) {
      for (std::int64_t c = 0; c < ceil_div(p_.hidden, bn_); ++c)
        prog().add_task(pools_[static_cast<std::size_t>(src)], "L0.combine", "unpermute", combine_ns, {put},
                        {0, false, "unpermute"});
    }
    out_.kernels_per_rank = 1;
    out_.symmetric_tensor_bytes = symmetric_tensor_bytes(p_.tokens, p_.experts, p_.hidden,
                                                         models::bytes_per_element(s_.workload.dtype), bm_);
    return std::move(out_);
  }

  const FlashPlan& plan() const { return p_; }
  /** The dtype its GEMM tiles run in (the MFU peak). */
  const std::string& math() const { return timer_.math; }

 private:
  /** The ops build() adds, counted from the plan first: tile tasks grow with tokens x experts. */
  double op_count() const {
    const double row_tile_ops =
        static_cast<double>(ceil_div(p_.ffn, bn_)) + 2 + 2 * static_cast<double>(ceil_div(p_.hidden, bn_));
    double ops = p_.ep * (1 + static_cast<double>(ceil_div(p_.tokens, bm_)));
    for (int src = 0; src < p_.ep; ++src) {
      for (int e = 0; e < p_.experts; ++e) {
        const std::int64_t rows = p_.rows_to(src, e);
        if (rows > 0) ops += 1 + static_cast<double>(ceil_div(rows, bm_)) * row_tile_ops;
      }
    }
    return ops;
  }

  sim::Program& prog() { return *out_.program; }

  /** The persistent kernel (one host launch) and its fused-gate tiles. */
  void add_pool_and_gate(int r) {
    const auto& hw = s_.hw;
    const std::int64_t H = p_.hidden, E = p_.experts;
    prog().set_streams(r, {"compute"});
    pools_.push_back(prog().add_pool(r, 0, "L0.megakernel", "megakernel", std::min(blocks_, hw.gpu.sm_count),
                                     blocks_ - 1, cost::launch_ns(hw), {}, {0, false, "megakernel"}));
    const std::int64_t tiles = ceil_div(p_.tokens, bm_);
    const double gate_ns =
        timer_.gemm(2.0 * bm_ * E * H, p_.tokens, E, H, static_cast<double>(tiles), p_.element, 1);
    gates_.emplace_back();
    for (std::int64_t t = 0; t < tiles; ++t)
      gates_.back().push_back(
          prog().add_task(pools_.back(), "L0.gate", "gate", gate_ns, {}, {0, false, "gate"}));
    if (r == 0) out_.flops_rank0 += 2.0 * static_cast<double>(p_.tokens) * E * H;
  }

  /** Dispatch packet (src → owner of e), then per row tile: GEMM0 tiles, join, GEMM1 tiles, combine put. */
  void add_expert_packet(int src, int e) {
    const std::int64_t rows = p_.rows_to(src, e), H = p_.hidden, I = p_.ffn;
    if (rows == 0) return;
    const int d = p_.owner(e);
    const OpId pool = pools_[static_cast<std::size_t>(d)];
    const int el = p_.element;
    OpId packet =
        prog().add_transfer(src, d, "L0.dispatch.e" + std::to_string(e), "dispatch",
                            static_cast<double>(rows) * H * el, sim::Transport::SM_KERNEL, latency_ns_,
                            gates_[static_cast<std::size_t>(src)], {0, false, "dispatch"});
    const std::int64_t m = rows_at_[static_cast<std::size_t>(d)];
    const double g0_ns = timer_.gemm(2.0 * bm_ * bn_ * H, m, I, H,
                                     static_cast<double>(ceil_div(m, bm_) * ceil_div(I, bn_)), el, p_.local);
    const double g1_ns = timer_.gemm(2.0 * bm_ * bn_ * I, m, H, I,
                                     static_cast<double>(ceil_div(m, bm_) * ceil_div(H, bn_)), el, p_.local);
    for (std::int64_t row0 = 0; row0 < rows; row0 += bm_) {
      const std::int64_t tile_rows = std::min<std::int64_t>(bm_, rows - row0);
      std::vector<OpId> g0, g1;
      for (std::int64_t c = 0; c < ceil_div(I, bn_); ++c)
        g0.push_back(prog().add_task(pool, "L0.gemm0", "routed_experts", g0_ns, {packet}, kExperts));
      OpId join = prog().add_task(pool, "L0.gemm0.done", "routed_experts", 0, g0, kExperts);
      for (std::int64_t c = 0; c < ceil_div(H, bn_); ++c)
        g1.push_back(prog().add_task(pool, "L0.gemm1", "routed_experts", g1_ns, {join}, kExperts));
      const double back = static_cast<double>(padded_ ? bm_ : tile_rows) * H * el;
      returned_.emplace_back(
          prog().add_transfer(d, src, "L0.combine.e" + std::to_string(e), "combine", back,
                              sim::Transport::SM_KERNEL, latency_ns_, g1, {0, false, "combine"}),
          src);
      if (d == 0) out_.flops_rank0 += 4.0 * static_cast<double>(tile_rows) * static_cast<double>(H * I);
    }
  }

  const Scenario& s_;
  int blocks_ = 0, bm_ = 0, bn_ = 0;
  bool padded_ = false;
  FlashPlan p_;
  TileTimer timer_;
  double latency_ns_ = 0;
  FlashBuilt out_;
  std::vector<std::int64_t> rows_at_;  ///< rows each rank computes (the GEMM its tiles add up to)
  std::vector<OpId> pools_;
  std::vector<std::vector<OpId>> gates_;
  std::vector<std::pair<OpId, int>> returned_;  ///< combine puts and the source rank they return to
};

}  // namespace
}  // namespace moesim::schedules::detail

namespace moesim::schedules::families {

void megakernel(ScheduleRegistry& registry) {
  Schedule schedule;
  schedule.name = "megakernel";
  schedule.help =
      "FlashMoE (NeurIPS'25): one persistent kernel per GPU per MoE layer; fused gate; "
      "GEMM0/GEMM1/combine "
      "tile tasks on blocks-1 processors; one-sided per-tile Dispatch/Combine, no barrier (forward, "
      "one MoE "
      "layer)";
  schedule.options = {
      {"blocks", "N", "thread blocks, one per SM (default: the GPU's SMs); blocks-1 are processors"},
      {"tile_m", "N", "tile rows bM (default 128)"},
      {"tile_n", "N", "tile columns bN (default 64)"},
      {"payload", "efficient|padded", "send routed rows only (default) or pad every expert to capacity"},
      {"math", "dtype|tf32",
       "GEMM tiles in the --dtype (default) or on TF32 tensor cores (FlashMoE's FP32), at the profile's "
       "measured tile rate for that math where it has one"},
      {"task_ns", "N", "per-task dispatch cost (default 569: measured persistent-kernel queue on H100)"}};
  schedule.validate = detail::validate_flash;
  schedule.build = [](const Scenario& s) {
    detail::MegakernelBuilder builder(s);
    detail::FlashBuilt built = builder.build();
    BuiltProgram out = detail::flash_result(s, builder.plan(), std::move(built));
    out.math_dtype = builder.math();
    return out;
  };
  schedule.figures = detail::flash_summary;
  schedule.power_not_modeled = detail::kFlashPowerNotModeled;
  registry.add(std::move(schedule));
}

}  // namespace moesim::schedules::families
