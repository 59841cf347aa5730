#pragma once
/** @file Build a scenario's op DAG with its schedule, run it, and derive the headline figures. */
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moesim/schedules/Figures.hpp"
#include "moesim/schedules/Scenario.hpp"
#include "moesim/sim/Analysis.hpp"
#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::schedules {

/** @brief Headline figures of one rank (ms). */
struct RankFigures {
  int rank = 0;
  double end_ms = 0, compute_ms = 0, comm_ms = 0, exposed_comm_ms = 0, overlap_pct = 0;
};

/** @brief The power-cap governor's outcome (run 0 of a Monte-Carlo set); `modeled` false without it. */
struct PowerFigures {
  bool modeled = false;
  std::string not_modeled_because;       ///< empty when modeled
  std::vector<double> speed;             ///< per simulated rank: compute speed the limit allows, (0, 1]
  std::vector<double> mean_power_w;      ///< per simulated rank, at that speed
  std::vector<double> uncapped_power_w;  ///< per simulated rank, what it would draw at full speed
  int runs = 0;                          ///< engine runs the governor took
  bool converged = false;
};

/** @brief Everything one simulation produced. */
struct SimulationResult {
  Scenario scenario;
  std::shared_ptr<const sim::Program> program;
  sim::RunResult run;
  sim::Analysis analysis;
  bool symmetric = false;  ///< simulated as one representative rank
  int world = 1;           ///< GPUs in the EP group
  int layers = 0;
  double step_ms = 0;          ///< the phase's time for the simulated layer stack (slowest rank)
  double layer_ms = 0;         ///< step_ms / layers
  double compute_ms = 0;       ///< mean over ranks of compute busy time
  double comm_ms = 0;          ///< mean over ranks of communication busy time
  double exposed_comm_ms = 0;  ///< mean over ranks of comm with no compute under it
  double overlap_pct = 0;      ///< 100 · (1 − exposed/comm)
  double sm_busy_pct = 0;      ///< compute_ms / step_ms
  double mfu_pct = 0;          ///< model FLOPs per rank / (step · dense peak)
  double tokens_per_s = 0;     ///< tokens of all ranks (× dp) per second of step
  std::vector<RankFigures> ranks;
  /** @brief The overlap degree d the program ran at (megatron: 1); 0 for schedules without one. */
  int degree = 0;
  /** @brief `--degree auto`: (d, step_ms) of every candidate simulated, in increasing d; else empty. */
  std::vector<std::pair<int, double>> degree_curve;
  /**
   * @brief Share of SM-time with a resident block, mean over ranks (FlashMoE Fig. 9's definition):
   * Σ kernel time x its SM share (sm_fraction; comm_sms/SMs for SM-driven collectives; pool_sms/SMs for
   * a persistent kernel) / step time, capped at 100.
   */
  double sm_util_pct = 0;
  /**
   * @brief Figures beyond the generic ones: FarSkip Eq. (9) for every all-to-all run, and what the
   * schedule's family adds (FlashMoE's GPU op counts and Dispatch bytes...), in summary order.
   */
  std::vector<FigureGroup> figures;
  /** @brief The figure group with JSON key `key`, or nullptr. */
  const FigureGroup* figure_group(const std::string& key) const;
  /** @brief Monte-Carlo runs (`--repeat`): per-run layer time, and its p50/p95 (nearest rank). */
  std::vector<double> repeat_layer_ms;
  double layer_ms_p50 = 0, layer_ms_p95 = 0;
  /** @brief The jitter actually injected (presets resolved to microseconds). */
  Noise noise;
  PowerFigures power;
};

/**
 * @brief Validates, builds with the scenario's registered schedule, and runs. ConfigError/ScheduleError
 * for bad input. A schedule that searches its overlap degree, with scenario.degree 0, is simulated at
 * every candidate d; the fastest is returned, with the whole curve in degree_curve (ties go to the
 * smaller d).
 */
SimulationResult simulate(const Scenario& scenario);

}  // namespace moesim::schedules
