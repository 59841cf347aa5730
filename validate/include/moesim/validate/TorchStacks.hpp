#pragma once
/**
 * @file Validation against PyTorch stacks moesim was not fitted to: the run records of kernels/torch_stacks
 * (kind "moesim-torch-stack-run") and the Kineto traces beside them. `moesim validate --measured RECORD|DIR`.
 *
 * Each record becomes the scenario of the stack it ran: its model with the widths it built and every layer an
 * MoE layer (the stacks have no dense layers), its EP group on one node, tokens, sequence, layers, phase and
 * routing; `regular` waits for Combine before the shared experts (shared_overlap=off), as the stack's regular
 * schedule does; `farskip` is moesim's FarSkip schedule. It is simulated with an implementation profile (by
 * default the shipped one of the record's style: eager for the loop styles, grouped for the grouped ones) on
 * the shipped hardware profile of the record's GPU. The FarSkip speedup pairs records of one folder (one
 * device call), since the same configuration moves between machines.
 *
 * Per op (`--steps`), where a trace lies beside the record: each op's GPU time, kernel count and host time in
 * the traced step (traces::attribute_step; host time scaled by the record's untraced issue time over the
 * traced step's), against the same op's on the simulated rank 0, forward and backward apart, so a miss names
 * its op.
 */
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/schedules/Scenario.hpp"
#include "moesim/traces/TorchStackRecord.hpp"

namespace moesim::validate {

/** @brief Which implementation profile simulates a record. */
struct ImplementationChoice {
  /** @brief A profile (name or file) for every record; empty: by style. */
  std::string all;
  /** @brief Style -> profile (name or file), before the defaults (loop: eager; grouped: grouped; hf-eager,
   * hf-grouped_mm: the shipped profile of that name). */
  std::map<std::string, std::string> by_style;
  /** @brief (style, hardware profile name) -> profile, before by_style: a profile learned from a trace of one
   * GPU for that GPU's records. */
  std::map<std::pair<std::string, std::string>, std::string> by_style_hw;
  /** @brief The profile for a record of `style` simulated on hardware profile `hw`. */
  std::string for_record(const std::string& style, const std::string& hw) const;
  /** @brief The profile for a record of `style` on any hardware. */
  std::string for_style(const std::string& style) const { return for_record(style, ""); }
};

/**
 * @brief Parses `--impl` values: "PROFILE" for all records, "STYLE=PROFILE" or "STYLE@HW=PROFILE" (records of
 * that style on hardware profile HW; repeatable). ConfigError at --impl for an empty profile, style or HW, or
 * two profiles for all.
 */
ImplementationChoice parse_implementation_choice(const std::vector<std::string>& values);

/** @brief One op of one pass, summed over the layers: measured in the trace and predicted. */
/// The OpTimes row of a trace's launches and syncs that no op claims (either pass; moesim predicts none).
inline constexpr const char* kOutsideOps = "(outside ops)";

struct OpTimes {
  std::string op;  ///< moesim's op name, dispatch / combine, or kOutsideOps
  bool backward = false;
  int measured_kernels = 0, predicted_kernels = 0;
  double measured_gpu_ms = 0, predicted_gpu_ms = 0;
  double measured_host_ms = 0, predicted_host_ms = 0;
};

/** @brief A record next to its simulation. */
struct TorchStackComparison {
  traces::TorchStackRecord record;
  std::string hw;    ///< hardware profile used
  std::string impl;  ///< implementation profile used
  double predicted_ms = 0;
  double host_speed = 1;         ///< the host speed simulated
  bool host_from_probe = false;  ///< ... set from the record's and the profile's host probes
  std::optional<double> measured_speedup, predicted_speedup;  ///< farskip records: regular / farskip
  std::vector<OpTimes> ops;                                   ///< --steps, when a trace lies beside it
  double error_pct() const { return 100.0 * (predicted_ms - record.step_ms_p50) / record.step_ms_p50; }
  /** @brief Model, style, EP, tokens, layers, phase, schedule. */
  std::string label() const;
};

/** @brief The records among `paths` (files, or folders searched recursively for `*.json` torch-stack
 * records). */
std::vector<traces::TorchStackRecord> find_torch_stack_records(const std::vector<std::string>& paths);

/** @brief The scenario that describes the record's run, on `hw`, with implementation `impl` (nullptr: fused).
 */
schedules::Scenario torch_stack_scenario(const traces::TorchStackRecord& record, const hw::HwProfile& hw,
                                         std::shared_ptr<const cost::ImplementationProfile> impl);

/** @brief What compare_torch_stacks does beside the step time. */
struct TorchStackOptions {
  std::string hw_override;  ///< a profile for every record instead of the GPU's shipped one
  ImplementationChoice impl;
  bool ops = false;  ///< per-op times where a trace lies beside the record
  /**
   * @brief Each record's host at the speed its host probe says: the implementation profile's host_probe_us
   * over the record's mean over ranks, where both say (else 1).
   */
  bool host_from_probe = false;
};

/**
 * @brief Simulates every record that ran (status ok). ConfigError when a record's GPU matches no shipped
 * profile and no override is given.
 */
std::vector<TorchStackComparison> compare_torch_stacks(const std::vector<traces::TorchStackRecord>& records,
                                                       const TorchStackOptions& options);

/** @brief Records over the tolerances (|time error| > time_tolerance_pct, |speedup error| >
 * speedup_tolerance). */
int torch_stack_failures(const std::vector<TorchStackComparison>& cs, double time_tolerance_pct,
                         double speedup_tolerance);

/**
 * @brief What set a record's measured pace: rank 0's untraced issue time over its GPU time. A step whose host
 * issued until the GPU finished (>= 0.9) moves with the host's speed, which differs up to 2x between
 * processes of one host (data/calibration/2026-11-30-nvidia-h200-probe-fidelity); one under 0.6 is the GPU's.
 */
enum class MeasuredPace { GPU, MIXED, HOST };
MeasuredPace measured_pace(const traces::TorchStackRecord& record);

/** @brief Records of one measured pace and their |time error| median (0 when none). */
struct PaceErrors {
  MeasuredPace pace;
  int records = 0;
  double median_abs_error_pct = 0;
};
/** @brief One entry per pace, GPU first. */
std::vector<PaceErrors> errors_by_measured_pace(const std::vector<TorchStackComparison>& cs);

/** @brief The table (and per-op tables when present) with mean/max errors per implementation. */
void print_torch_stacks(std::ostream& out, const std::vector<TorchStackComparison>& cs,
                        double time_tolerance_pct, double speedup_tolerance);

/** @brief --json rows: {source, scenario, metric, measured, predicted, error_pct} per record (and op). */
nlohmann::json torch_stack_rows_json(const std::vector<TorchStackComparison>& cs);

}  // namespace moesim::validate
