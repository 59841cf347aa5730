#pragma once
/**
 * @file Validation against real runs of the in-tree layer runner (`kernels/layer_runner`):
 * `moesim validate --measured FILE`.
 *
 * The runner writes one record per (config, schedule) with the exact routing it executed
 * (tokens_to_expert per source rank); each record becomes the Scenario that describes the same
 * program — same model, GPUs, tokens, layers, routing matrix, schedule and transport — simulated on
 * the calibrated profile of the GPU the runner ran on.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"
#include "moesim/validate/OpProfile.hpp"

namespace moesim::validate {

/** @brief One layer-runner record (a schedule of one config), as measured. */
struct MeasuredRun {
  std::string file;     ///< the results file
  std::string pointer;  ///< JSON pointer of the record, e.g. "/results/3"
  std::string device;   ///< GPU name the runner reported, e.g. "NVIDIA H200"
  std::string model;
  std::string moe_comm;  ///< alltoall | allreduce
  std::string phase;     ///< forward | prefill
  std::string schedule;  ///< regular | farskip | farskip-ce
  std::string routing;   ///< as given to the runner
  std::string attention = "unfused";
  std::string experts = "loop";  ///< loop: one GEMM per local expert; grouped: one grouped kernel
  int gpus = 1, ep = 1, tp = 1, layers = 1;
  std::int64_t tokens_per_rank = 0, seq = 0;
  std::uint64_t seed = 1;
  bool sync_splits = true;
  std::vector<std::vector<std::int64_t>> tokens_to_expert;
  double stack_ms = 0;         ///< p50 over iterations of the slowest rank's stack time
  double compute_only_ms = 0;  ///< p50 with every collective replaced by a local copy
  double comm_only_ms = 0;     ///< p50 of the regular schedule's collectives alone
  double exposed_comm_ms = 0;
  double overlap_pct = 0;
  std::optional<double> speedup_vs_regular;
  bool check_passed = true;
  /// `layer_runner --op-profile on`: the full pass's steps as rank op_profile_rank recorded them (empty when
  /// the record has no op profile)
  std::vector<OpProfileStep> op_profile;
  int op_profile_rank = 0;

  /** @brief The config without the schedule: records that share it are one comparison group. */
  std::string config_key() const;
  /** @brief Short text of the config, for tables. */
  std::string label() const;
};

/**
 * @brief Reads a layer_runner results file. ConfigError naming the file and JSON pointer for anything
 * missing or malformed; a record whose check failed is kept (check_passed false) so callers can refuse it.
 */
std::vector<MeasuredRun> read_layer_runner_results(const std::string& file);

/** @brief The shipped profile name for a GPU name ("NVIDIA H200" -> "h200"); empty when none matches. */
std::string profile_for_device(const std::string& device);

/** @brief The scenario that describes the record's run, on `hw` (model loaded by name). */
schedules::Scenario measured_scenario(const MeasuredRun& run, const hw::HwProfile& hw);

/** @brief A record next to its simulation. */
struct MeasuredComparison {
  MeasuredRun run;
  std::string hw;  ///< profile name used
  double predicted_ms = 0;
  double predicted_exposed_ms = 0;
  double predicted_overlap_pct = 0;
  std::optional<double> predicted_speedup;  ///< regular / this, when the file has the config's regular record
  std::vector<OpProfileStep> predicted_op_profile;  ///< when run.op_profile is not empty (OpProfile.hpp)
  double error_pct() const { return 100.0 * (predicted_ms - run.stack_ms) / run.stack_ms; }
};

/**
 * @brief Simulates every record of `runs`. `hw_override` (a profile name or path) replaces the
 * device-derived profile. ConfigError when a record's device matches no shipped profile and no override
 * is given, or when a record failed its correctness check.
 */
std::vector<MeasuredComparison> compare_measured(const std::vector<MeasuredRun>& runs,
                                                 const std::string& hw_override = "");

/**
 * @brief One config and schedule on one profile over its repeated runs (leases). A config's measured
 * speedup spreads between leases by more than the speedup tolerance, so the model is judged on medians.
 * The speedup is the median of the per-run speedups, each of which pairs records of the same lease, not
 * the ratio of the median times: that ratio would pair one lease's regular with another lease's FarSkip.
 */
struct MeasuredConfigSummary {
  std::string label;   ///< MeasuredRun::label() of the runs
  std::string device;  ///< GPU name the runner reported
  std::string hw;      ///< profile name used
  std::string schedule;
  int runs = 0;
  double measured_ms_median = 0, measured_ms_min = 0, measured_ms_max = 0;
  double predicted_ms = 0;  ///< median of the runs' predictions (their recorded routings may differ)
  /// Over the runs that have both a measured and a predicted speedup; empty when none has.
  std::optional<double> speedup_median, speedup_min, speedup_max, predicted_speedup_median;
  double error_pct() const { return 100.0 * (predicted_ms - measured_ms_median) / measured_ms_median; }
};

/**
 * @brief Groups `comparisons` by profile, MeasuredRun::config_key() and schedule, in order of first
 * appearance. Median of an even count: the mean of the two middle values.
 */
std::vector<MeasuredConfigSummary> summarize_by_config(const std::vector<MeasuredComparison>& comparisons);

}  // namespace moesim::validate
