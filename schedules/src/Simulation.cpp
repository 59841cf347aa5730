#include "moesim/schedules/Simulation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "OverlapBound.hpp"
#include "ScenarioSize.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/cost/Machine.hpp"
#include "moesim/schedules/Registry.hpp"
#include "moesim/sim/Engine.hpp"
#include "step/StepBuilder.hpp"
#include "step/StepFigures.hpp"

namespace moesim::schedules {

namespace {

/** Rejects what no schedule can run, then what this one cannot (its options, --degree, its own rules). */
void validate_for(const Scenario& s, const Schedule& schedule) {
  validate(s);
  check_options(s, schedule);
  if (s.degree < 0) throw ScheduleError("--degree must be a positive number or auto");
  if (s.degree != 0 && !schedule.takes_degree) {
    std::string takers;
    for (const auto& other : schedule_registry().all())
      if (other.takes_degree) takers += (takers.empty() ? "" : ", ") + other.name;
    throw ScheduleError("--degree applies to the token-pipeline schedules (" + takers + "), not to " +
                        s.schedule);
  }
  if (schedule.validate) schedule.validate(s);
  const PipelineSchedule& pipeline = find_pipeline_schedule(s.pp_schedule);
  if (is_step(s)) {
    if (!schedule.chunks)
      throw ScheduleError("--schedule " + s.schedule +
                          " builds layer stacks only: no --pp, --vpp, --micro-batches or --optimizer");
    if (pipeline.validate) pipeline.validate(s);
  }
}

/** Share of SM-time with a resident block, per rank, averaged (see SimulationResult::sm_util_pct). */
double sm_util_pct(const SimulationResult& r, const sim::GpuResources& gpu) {
  const auto& ops = r.program->ops();
  std::vector<double> busy(static_cast<std::size_t>(r.program->world_size()), 0.0);
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
  } else if (const std::string& why = find_schedule(s.schedule).power_not_modeled; !why.empty()) {
    r.power.not_modeled_because = why;
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
  detail::check_run_work(r.scenario, program, power.has_value());
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

SimulationResult simulate_one(const Scenario& scenario, const Schedule& schedule) {
  validate_for(scenario, schedule);
  SimulationResult r;
  r.scenario = scenario;
  BuiltProgram built =
      is_step(scenario) ? detail::build_step(scenario, schedule.chunks(scenario)) : schedule.build(scenario);
  r.program = built.program;
  r.symmetric = built.program->is_symmetric();
  r.world = is_step(scenario) ? total_gpus(scenario) : group_size(scenario);
  r.layers = built.layers;
  r.degree = built.degree;
  sim::check_acyclic(*r.program);
  // Pipeline stages and data-parallel replicas may span more nodes than the expert-parallel group.
  const int nodes =
      std::max(node_count(scenario), (r.program->world_size() + scenario.hw.node.gpus_per_node - 1) /
                                         scenario.hw.node.gpus_per_node);
  sim::Platform platform =
      cost::make_platform(scenario.hw, nodes, scenario.cluster ? &*scenario.cluster : nullptr);
  platform.backend = scenario.engine;
  r.noise = resolve_noise(scenario);
  r.run = run_repeats(platform, *r.program, r);
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
  const double peak = scenario.hw.peak_flops(
      built.math_dtype.empty() ? models::to_string(scenario.workload.dtype) : built.math_dtype);
  r.mfu_pct = r.step_ms > 0 ? 100.0 * built.flops_rank0 / (r.step_ms / 1e3 * peak) : 0.0;
  const double tokens = built.tokens_per_step * scenario.parallel.dp;
  r.tokens_per_s = r.step_ms > 0 ? tokens / (r.step_ms / 1e3) : 0.0;
  r.sm_util_pct = sm_util_pct(r, platform.gpu);
  r.figures = std::move(built.figures);
  if (auto step = detail::step_figures(r, built)) r.figures.push_back(std::move(*step));
  if (auto eq9 = detail::farskip_eq9(r)) r.figures.push_back(std::move(*eq9));
  if (schedule.figures) {
    for (FigureGroup& g : schedule.figures(r)) r.figures.push_back(std::move(g));
  }
  return r;
}

}  // namespace

const FigureGroup* SimulationResult::figure_group(const std::string& key) const {
  for (const FigureGroup& g : figures) {
    if (!key.empty() && g.key == key) return &g;
  }
  return nullptr;
}

SimulationResult simulate(const Scenario& input) {
  Scenario scenario = input;
  if (scenario.noise.scope != sim::JitterScope::NONE) scenario.per_rank = true;  // stragglers differ per rank
  const Schedule& schedule = find_schedule(scenario.schedule);
  validate_for(scenario, schedule);
  detail::check_scenario_size(scenario);
  if (scenario.degree != 0 || !schedule.degrees) return simulate_one(scenario, schedule);
  std::vector<std::pair<int, double>> curve;
  std::optional<SimulationResult> best;
  for (int d : schedule.degrees(scenario)) {
    Scenario at = scenario;
    at.degree = d;
    SimulationResult r = simulate_one(at, schedule);
    curve.emplace_back(d, r.step_ms);
    if (!best || r.step_ms < best->step_ms) best = std::move(r);
  }
  MOE_CHECK(best.has_value()) << "a schedule's validate() admits no --degree auto without a candidate degree";
  best->degree_curve = std::move(curve);
  return std::move(*best);
}

}  // namespace moesim::schedules
