#include "ScenarioSize.hpp"

#include <algorithm>
#include <string>

#include "moesim/common/Error.hpp"
#include "moesim/common/Limits.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::schedules::detail {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// A draw (one token choosing one expert) costs ~10-20 ns: 1e10 draws are minutes.
constexpr std::uint64_t kDefaultDraws = 10'000'000'000;
constexpr std::uint64_t kDefaultMemoryGiB = 16;
// Passes of the power-cap governor at most (sim/src/Power.cpp kMaxRuns), and op-runs per allowed op.
constexpr double kPowerPasses = 12;
constexpr double kRunsPerOp = 50;

bool draws_tokens(models::RoutingSpec::Kind kind) {
  using Kind = models::RoutingSpec::Kind;
  return kind == Kind::UNIFORM || kind == Kind::ZIPF || kind == Kind::HISTOGRAM;
}

/** Bytes of the routing plan (slots per rank and expert, and their copies) and the all-to-all byte
 * matrices (one per MoE layer, Dispatch and Combine, each pass), an upper estimate. */
double matrix_bytes(const Scenario& s) {
  const double ranks = group_size(s);
  const double routing = 3 * ranks * s.model.moe.experts * 8.0;
  if (s.parallel.moe_comm != MoeComm::ALLTOALL) return routing;
  const double passes = s.workload.phase == Phase::TRAIN ? 3 : 1;
  const double moe_layers = std::min(simulated_layers(s), s.model.layers);
  return routing + moe_layers * 2 * passes * ranks * ranks * 8.0;
}

/**
 * Engine ops the scenario holds at the least. Measured per rank, layer and pass (deepseek-v2-lite, EP 8):
 * 20 in a symmetric forward of 2 layers, ~45 per rank in a forward and ~106 in a training step, and ~20 per
 * micro-batch of 1a1m at d = 16 and 64; 4 per rank, layer, pass and micro-batch stays below all of them.
 * Ranks: one unless the program cannot be symmetric (per rank, jitter, drawn routing). A lower bound refuses
 * only what the program's own count (sim::Program) would refuse later, only sooner and before the memory
 * is taken.
 */
double fewest_ops(const Scenario& s) {
  constexpr double kOpsPerRankLayerPass = 4;
  const bool every_rank =
      s.per_rank || s.noise.scope != sim::JitterScope::NONE || draws_tokens(s.workload.routing.kind);
  const double ranks = every_rank ? group_size(s) : 1;
  const double passes = s.workload.phase == Phase::TRAIN ? 3 : 1;
  // A step runs every layer once per micro-batch, wherever its stage is.
  return ranks * simulated_layers(s) * passes * std::max(1, s.degree) * s.workload.micro_batches *
         kOpsPerRankLayerPass;
}

}  // namespace

void check_scenario_size(const Scenario& s) {
  sim::check_op_count(fewest_ops(s));
  const double ranks = group_size(s);
  if (draws_tokens(s.workload.routing.kind)) {
    const double draws = ranks * static_cast<double>(s.workload.tokens) * s.model.moe.top_k;
    const auto limit = limit_from_env("MOESIM_MAX_DRAWS", kDefaultDraws, std::uint64_t{1} << 50);
    if (draws > static_cast<double>(limit)) {
      throw ScheduleError(
          "the routing would draw " + format_number(draws) + " token-expert choices (" +
          format_number(ranks) + " ranks x " + std::to_string(s.workload.tokens) + " tokens x top_k " +
          std::to_string(s.model.moe.top_k) + "), more than " + format_number(static_cast<double>(limit)) +
          " (MOESIM_MAX_DRAWS, docs/limits.md): fewer ranks or tokens, or --routing balanced");
    }
  }
  const double bytes = matrix_bytes(s);
  const auto gib = limit_from_env("MOESIM_MAX_MEMORY_GB", kDefaultMemoryGiB, std::uint64_t{1} << 20);
  if (bytes > static_cast<double>(gib) * kGiB) {
    throw ScheduleError("the scenario's routing and all-to-all matrices would take " +
                        format_number(bytes / kGiB) + " GiB (" + format_number(ranks) + " ranks, " +
                        std::to_string(s.model.moe.experts) + " experts, " +
                        std::to_string(simulated_layers(s)) + " layers), more than " + std::to_string(gib) +
                        " GiB (MOESIM_MAX_MEMORY_GB, docs/limits.md): simulate fewer ranks or layers");
  }
}

void check_run_work(const Scenario& s, const sim::Program& program, bool power_capped) {
  const double runs = std::max(1, s.noise.repeat) * (power_capped ? kPowerPasses : 1.0);
  const double ops = static_cast<double>(program.ops().size());
  const double limit = kRunsPerOp * static_cast<double>(sim::max_program_ops());
  if (ops * runs > limit) {
    throw ScheduleError("the scenario's " + format_number(ops) + " engine ops would run " +
                        format_number(runs) + " times (--repeat " + std::to_string(s.noise.repeat) +
                        (power_capped ? " x up to 12 power-cap passes" : "") + "), past " +
                        format_number(limit) +
                        " op-runs (50 x MOESIM_MAX_OPS, docs/limits.md): fewer repeats, --power off, or a "
                        "smaller scenario");
  }
}

}  // namespace moesim::schedules::detail
