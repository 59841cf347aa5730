#include "moesim/schedules/Simulation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "FlashMoePlan.hpp"
#include "FoldPipeline.hpp"
#include "Layers.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/cost/Machine.hpp"
#include "moesim/schedules/FlashMoe.hpp"
#include "moesim/schedules/FoldMoe.hpp"
#include "moesim/sim/Engine.hpp"

namespace moesim::schedules {

const std::vector<ScheduleInfo>& schedule_catalog() {
  static const std::vector<OptionDoc> common = {
      {"sync_splits", "on|off",
       "Megatron's host sync for the all-to-all split sizes before Dispatch (default on)"},
      {"shared_overlap", "on|off",
       "unconverted layers run shared experts under Combine (default on; Megatron's default is off)"},
      {"transport", "nccl|copy_engine",
       "all-to-alls as NCCL/RCCL kernels (default; they hold SMs) or as peer copies by the copy engines (no "
       "SMs; needs the profile's copy_engine all_to_all tables)"}};
  static const OptionDoc flash_payload = {"payload", "efficient|padded",
                                          "override the baseline's padding (NCCL ones pad to capacity)"};
  static const std::vector<ScheduleInfo> catalog = {
      {"regular",
       "Blocking MoE communication: Dispatch/Combine all-to-alls (training) or TP/EP all-reduces (prefill); "
       "shared experts overlap Combine",
       common},
      {"farskip",
       "FarSkip-Collective connectivity (AMD, 2025): Dispatch overlaps core attention, Combine overlaps "
       "shared "
       "experts and the next layer's qkv; in prefill each all-reduce is waited for only before the next "
       "sub-block of its kind",
       {{"mode", "overlap|simple",
         "overlap (default) or Primus' simple reference: FarSkip wiring, no overlap"},
        {"parts", "all|attn_only|mlp_only",
         "all (default); attn_only: only the attention input skips the MoE output; mlp_only: only the MoE "
         "input skips the attention output"},
        {"layers", "all|first:N|last:N", "which layers are converted (default all)"},
        common[0],
        common[1]}},
      {"megatron",
       "FoldMoE family baseline (Megatron-MoE): TP+SP attention, then Dispatch, experts and Combine of the "
       "whole batch, nothing overlapped (d = 1)",
       {}},
      {"tutel",
       "FoldMoE family: Tutel's MoE-only token pipeline; Dispatch, experts and Combine of d chunks overlap "
       "(--degree N|auto)",
       {}},
      {"aaam",
       "FoldMoE family (FoldMoE §3): attention-MoE pipeline over d token micro-batches, all attention slices "
       "first, then all MoE micro-batches (--degree N|auto)",
       {}},
      {"1a1m",
       "FoldMoE family (FoldMoE §4.1): attention-MoE pipeline interleaving one attention slice and one MoE "
       "micro-batch (--degree N|auto)",
       {}},
      {"1a1m-uniform",
       "FoldMoE (FoldMoE §4.2): 1a1m with Algorithm 1's quick-start time-uniform attention slices and a "
       "token buffer in front of d uniform MoE micro-batches (--degree N|auto)",
       {}},
      {"megakernel",
       "FlashMoE (NeurIPS'25): one persistent kernel per GPU per MoE layer; fused gate; GEMM0/GEMM1/combine "
       "tile "
       "tasks on blocks-1 processors; one-sided per-tile Dispatch/Combine, no barrier (forward, one MoE "
       "layer)",
       {{"blocks", "N", "thread blocks, one per SM (default: the GPU's SMs); blocks-1 are processors"},
        {"tile_m", "N", "tile rows bM (default 128)"},
        {"tile_n", "N", "tile columns bN (default 64)"},
        {"payload", "efficient|padded", "send routed rows only (default) or pad every expert to capacity"},
        {"math", "dtype|tf32", "GEMM tiles at the --dtype peak (default) or on TF32 tensor cores"},
        {"task_ns", "N", "per-task dispatch cost (default 569: measured persistent-kernel queue on H100)"}}},
      {"comet",
       "FlashMoE baseline: COMET, 33 GPU ops/layer (Table 1), peer copies, experts as grouped GEMMs",
       {flash_payload}},
      {"megatron-cutlass",
       "FlashMoE baseline: Megatron-LM + CUTLASS grouped GEMM, 85 GPU ops, NCCL all-to-all",
       {flash_payload}},
      {"megatron-te",
       "FlashMoE baseline: Megatron-LM + Transformer Engine, 261 GPU ops, NCCL all-to-all",
       {flash_payload}},
      {"megatron-deepep",
       "FlashMoE baseline: Megatron-LM + DeepEP, 432 GPU ops, NVSHMEM dispatch kernels",
       {flash_payload}},
      {"deepspeed-moe",
       "FlashMoE baseline: DeepSpeed-MoE, 550 GPU ops, NCCL all-to-all, capacity padding",
       {flash_payload}},
      {"fastermoe",
       "FlashMoE baseline: FasterMoE, N-1 pairwise exchange rounds pipelined with expert chunks",
       {flash_payload}},
  };
  return catalog;
}

namespace {

const ScheduleInfo& find_schedule(const std::string& name) {
  for (const auto& info : schedule_catalog()) {
    if (info.name == name) return info;
  }
  std::string names;
  for (const auto& info : schedule_catalog()) names += (names.empty() ? "" : ", ") + info.name;
  throw ConfigError("", "--schedule", "= \"" + name + "\": unknown schedule (known: " + names + ")");
}

struct Built {
  std::shared_ptr<sim::Program> program;
  double flops_rank0 = 0;
  bool symmetric = false;
  int degree = 0;
  std::vector<std::int64_t> attention_slices;
  detail::FlashBuilt flash;
};

Built build(const Scenario& s) {
  find_schedule(s.schedule);
  if (is_flashmoe_schedule(s.schedule)) {
    if (s.workload.phase != Phase::FORWARD)
      throw ConfigError("", "--phase",
                        "= " + to_string(s.workload.phase) + ": --schedule " + s.schedule +
                            " models one MoE layer's forward pass: use --phase forward");
    Built out;
    out.flash = s.schedule == "megakernel" ? detail::build_megakernel(s) : detail::build_flash_baseline(s);
    out.program = out.flash.program;
    out.flops_rank0 = out.flash.flops_rank0;
    out.symmetric = out.flash.symmetric;
    return out;
  }
  if (is_foldmoe_schedule(s.schedule)) {
    auto fold = detail::build_foldmoe(s);
    return Built{fold.program, fold.flops_rank0, fold.symmetric, fold.degree, fold.slices, {}};
  }
  const bool farskip = s.schedule == "farskip";
  const int layers = simulated_layers(s);
  auto modes = detail::layer_modes(farskip, s.options, layers);
  const bool sync = detail::sync_splits(s.options);
  auto traffic = detail::plan_traffic(s);
  Built out;
  out.symmetric = traffic.symmetric;
  out.program = std::make_shared<sim::Program>(group_size(s), traffic.symmetric);
  detail::ProgramBuilder b(s, traffic, *out.program);
  for (int r : out.program->simulated_ranks()) {
    b.begin_rank(r);
    if (s.parallel.moe_comm == MoeComm::ALLREDUCE) {
      detail::allreduce_forward(b, modes);
    } else {
      detail::alltoall_forward(b, modes, sync);
      if (s.workload.phase == Phase::TRAIN) detail::alltoall_backward(b, modes);
    }
  }
  out.flops_rank0 = b.flops(0);
  return out;
}

/** Eq. (9) terms from the forward ops of each MoE layer on rank 0 (durations as simulated). */
std::optional<FarSkipBound> farskip_bound(const SimulationResult& r) {
  std::map<int, FarSkipBound> per_layer;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.rank != 0 || op.kind == sim::OpKind::HOST) continue;
    const int layer = op.origin.layer;
    if (op.origin.backward || layer < 0 || !r.scenario.model.is_moe_layer(layer)) continue;
    const auto& t = r.run.ops[i];
    auto& b = per_layer[layer];
    if (op.kind != sim::OpKind::COLLECTIVE && op.kind != sim::OpKind::KERNEL) continue;
    if (op.is_comm()) {
      double ms = static_cast<double>(t.end - t.data_start) / 1e6;
      if (op.category == "dispatch") b.dispatch_ms += ms;
      if (op.category == "combine") b.combine_ms += ms;
      continue;
    }
    double ms = static_cast<double>(t.end - t.start) / 1e6;
    b.layer_compute_ms += ms;
    if (op.category == "routed_experts") b.routed_ms += ms;
    if (op.category == "gate") b.gate_ms += ms;
  }
  if (per_layer.empty() || r.scenario.parallel.moe_comm != MoeComm::ALLTOALL) return std::nullopt;
  FarSkipBound mean;
  for (const auto& [layer, b] : per_layer) {
    mean.dispatch_ms += b.dispatch_ms;
    mean.combine_ms += b.combine_ms;
    mean.layer_compute_ms += b.layer_compute_ms;
    mean.routed_ms += b.routed_ms;
    mean.gate_ms += b.gate_ms;
  }
  const double n = static_cast<double>(per_layer.size());
  for (double* v :
       {&mean.dispatch_ms, &mean.combine_ms, &mean.layer_compute_ms, &mean.routed_ms, &mean.gate_ms})
    *v /= n;
  return mean;
}

/** Share of SM-time with a resident block, per rank, averaged (see SimulationResult::sm_util_pct). */
double sm_util_pct(const SimulationResult& r, const sim::GpuResources& gpu) {
  const auto& ops = r.program->ops();
  std::vector<double> busy(static_cast<std::size_t>(r.world), 0.0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const auto& t = r.run.ops[i];
    double share = 0;
    if (op.kind == sim::OpKind::KERNEL) share = op.work.sm_fraction;
    if (op.kind == sim::OpKind::POOL) share = static_cast<double>(op.pool_sms) / gpu.sm_count;
    if (op.kind == sim::OpKind::COLLECTIVE &&
        r.program->collectives()[static_cast<std::size_t>(op.collective)].transport ==
            sim::Transport::SM_KERNEL)
      share = static_cast<double>(gpu.comm_sms) / gpu.sm_count;
    busy[static_cast<std::size_t>(op.rank)] += share * static_cast<double>(t.end - t.start);
  }
  double total = 0;
  for (int rank : r.program->simulated_ranks()) {
    total += std::min(1.0, busy[static_cast<std::size_t>(rank)] / static_cast<double>(r.run.makespan_ns));
  }
  return r.run.makespan_ns > 0 ? 100.0 * total / static_cast<double>(r.program->simulated_ranks().size())
                               : 0.0;
}

/** The profile's power model when this scenario is power-capped; says why not in r.power otherwise. */
std::optional<sim::PowerModel> capped_power_model(SimulationResult& r) {
  const Scenario& s = r.scenario;
  std::optional<sim::PowerModel> model = cost::power_model(s.hw);
  if (!s.power_cap) {
    r.power.not_modeled_because = "--power off";
  } else if (!model) {
    r.power.not_modeled_because = "profile '" + s.hw.name + "' has no power section";
  } else if (is_flashmoe_schedule(s.schedule)) {
    r.power.not_modeled_because = "persistent-kernel tasks carry no FLOP count";
  } else {
    r.power.modeled = true;
    return model;
  }
  return std::nullopt;
}

/** Runs the program noise.repeat times (jitter seed workload.seed + j); keeps run 0, records quantiles. */
sim::RunResult run_repeats(const sim::Platform& platform, const sim::Program& program, SimulationResult& r) {
  const Noise& noise = r.noise;
  const std::optional<sim::PowerModel> power = capped_power_model(r);
  sim::RunResult first;
  for (int j = 0; j < std::max(1, noise.repeat); ++j) {
    sim::JitterSpec jitter{noise.scope, noise.median_us * 1e3, noise.p95_us * 1e3,
                           r.scenario.workload.seed + j};
    sim::PowerOutcome outcome;
    sim::RunResult run = power ? sim::run_power_capped(platform, program, jitter, *power, outcome)
                               : sim::run(platform, program, jitter);
    if (j == 0 && power) {
      for (int rank : program.simulated_ranks()) {
        const auto i = static_cast<std::size_t>(rank);
        r.power.speed.push_back(outcome.speed[i]);
        r.power.mean_power_w.push_back(outcome.mean_power_w[i]);
        r.power.uncapped_power_w.push_back(outcome.uncapped_power_w[i]);
      }
      r.power.runs = outcome.runs;
      r.power.converged = outcome.converged;
    }
    r.repeat_layer_ms.push_back(static_cast<double>(run.makespan_ns) / 1e6 / r.layers);
    if (j == 0) first = std::move(run);
  }
  std::vector<double> sorted = r.repeat_layer_ms;
  std::sort(sorted.begin(), sorted.end());
  auto nearest_rank = [&](double q) {
    auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(k, 1)) - 1];
  };
  r.layer_ms_p50 = nearest_rank(0.5);
  r.layer_ms_p95 = nearest_rank(0.95);
  return first;
}

SimulationResult simulate_one(const Scenario& scenario) {
  validate(scenario);
  SimulationResult r;
  r.scenario = scenario;
  Built built = build(scenario);
  r.program = built.program;
  r.symmetric = built.symmetric;
  r.world = group_size(scenario);
  r.layers = is_flashmoe_schedule(scenario.schedule) ? 1 : simulated_layers(scenario);
  sim::check_acyclic(*r.program);
  sim::Platform platform = cost::make_platform(scenario.hw, node_count(scenario));
  r.noise = resolve_noise(scenario);
  r.run = run_repeats(platform, *r.program, r);
  r.analysis = sim::analyze(*r.program, r.run);
  r.kernels_per_rank = built.flash.kernels_per_rank;
  r.dispatch_bytes = built.flash.network_bytes;
  r.dispatch_routed_bytes = built.flash.routed_bytes;
  r.dispatch_padded_bytes = built.flash.padded_bytes;
  if (scenario.schedule == "megakernel") {
    const int tile_m = detail::option_int(scenario, "tile_m", 128, 16, 1024);
    r.symmetric_tensor_bytes =
        symmetric_tensor_bytes(scenario.workload.tokens, scenario.model.moe.experts, scenario.model.hidden,
                               models::bytes_per_element(scenario.workload.dtype), tile_m);
  }
  r.step_ms = static_cast<double>(r.run.makespan_ns) / 1e6;
  r.layer_ms = r.step_ms / r.layers;
  for (const auto& m : r.analysis.ranks) {
    RankFigures f{
        m.rank,       m.end_ns / 1e6, m.compute_busy_ns / 1e6, m.comm_busy_ns / 1e6, m.exposed_comm_ns / 1e6,
        m.overlap_pct};
    r.compute_ms += f.compute_ms;
    r.comm_ms += f.comm_ms;
    r.exposed_comm_ms += f.exposed_comm_ms;
    r.ranks.push_back(f);
  }
  const double n = static_cast<double>(r.ranks.size());
  r.compute_ms /= n;
  r.comm_ms /= n;
  r.exposed_comm_ms /= n;
  r.overlap_pct = r.comm_ms > 0 ? 100.0 * (1.0 - r.exposed_comm_ms / r.comm_ms) : 0.0;
  r.sm_busy_pct = r.step_ms > 0 ? 100.0 * r.compute_ms / r.step_ms : 0.0;
  const double peak = scenario.hw.peak_flops(models::to_string(scenario.workload.dtype));
  r.mfu_pct = r.step_ms > 0 ? 100.0 * built.flops_rank0 / (r.step_ms / 1e3 * peak) : 0.0;
  const bool replicated = scenario.parallel.moe_comm == MoeComm::ALLREDUCE;
  // foldmoe: workload.tokens belong to one TP group, and the EP group holds ep/tp of them.
  const int holders = is_foldmoe_schedule(scenario.schedule) ? r.world / scenario.parallel.tp : r.world;
  const double tokens =
      static_cast<double>(scenario.workload.tokens) * (replicated ? 1 : holders) * scenario.parallel.dp;
  r.tokens_per_s = r.step_ms > 0 ? tokens / (r.step_ms / 1e3) : 0.0;
  r.farskip_bound = farskip_bound(r);
  r.sm_util_pct = sm_util_pct(r, platform.gpu);
  r.degree = built.degree;
  r.attention_slices = std::move(built.attention_slices);
  return r;
}

}  // namespace

SimulationResult simulate(const Scenario& input) {
  Scenario scenario = input;
  if (scenario.noise.scope != sim::JitterScope::NONE) scenario.per_rank = true;  // stragglers differ per rank
  validate(scenario);
  if (scenario.degree != 0 || !has_overlap_degree(scenario.schedule)) return simulate_one(scenario);
  std::vector<std::pair<int, double>> curve;
  std::optional<SimulationResult> best;
  for (int d : candidate_degrees(scenario)) {
    Scenario at = scenario;
    at.degree = d;
    SimulationResult r = simulate_one(at);
    curve.emplace_back(d, r.step_ms);
    if (!best || r.step_ms < best->step_ms) best = std::move(r);
  }
  MOE_CHECK(best.has_value()) << "validate() admits no foldmoe scenario without a candidate degree";
  best->degree_curve = std::move(curve);
  return std::move(*best);
}

}  // namespace moesim::schedules
