#include "moesim/schedules/Simulation.hpp"

#include <algorithm>
#include <map>

#include "FoldPipeline.hpp"
#include "Layers.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/schedules/CostModel.hpp"
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
};

Built build(const Scenario& s) {
  find_schedule(s.schedule);
  if (is_foldmoe_schedule(s.schedule)) {
    auto fold = detail::build_foldmoe(s);
    return Built{fold.program, fold.flops_rank0, fold.symmetric, fold.degree, fold.slices};
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

int layer_of(const std::string& op_name) {
  if (op_name.size() < 2 || op_name[0] != 'L') return -1;
  return std::atoi(op_name.c_str() + 1);
}

/** Eq. (9) terms from the forward ops of each MoE layer on rank 0 (durations as simulated). */
std::optional<FarSkipBound> farskip_bound(const SimulationResult& r) {
  std::map<int, FarSkipBound> per_layer;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.rank != 0 || op.kind == sim::OpKind::HOST) continue;
    bool backward = op.name.find(".dgrad") != std::string::npos ||
                    op.name.find(".wgrad") != std::string::npos || op.name.find(".bwd") != std::string::npos;
    int layer = layer_of(op.name);
    if (backward || layer < 0 || !r.scenario.model.is_moe_layer(layer)) continue;
    const auto& t = r.run.ops[i];
    auto& b = per_layer[layer];
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

SimulationResult simulate_one(const Scenario& scenario) {
  validate(scenario);
  SimulationResult r;
  r.scenario = scenario;
  Built built = build(scenario);
  r.program = built.program;
  r.symmetric = built.symmetric;
  r.world = group_size(scenario);
  r.layers = simulated_layers(scenario);
  sim::check_acyclic(*r.program);
  sim::Platform platform = make_platform(scenario.hw, node_count(scenario));
  r.run = sim::run(platform, *r.program);
  r.analysis = sim::analyze(*r.program, r.run);
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
  r.degree = built.degree;
  r.attention_slices = std::move(built.attention_slices);
  return r;
}

}  // namespace

SimulationResult simulate(const Scenario& scenario) {
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
