#pragma once
/**
 * @file The self-contained overlap report: one index.html (inline SVG and CSS, no scripts, no network),
 * a Chrome/Perfetto trace.json, and summary.md for pasting into issues and pull requests.
 */
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::reports {

/** @brief One finished sweep point as the report sees it. */
struct SweepPoint {
  std::map<std::string, std::string> params;  ///< axis values
  bool ok = true;
  std::map<std::string, double> metrics;
};

/** @brief A sweep's results with its axes and the metric to plot. */
struct SweepTable {
  std::string name;
  std::vector<std::string> axes;
  std::string metric = "step_ms";
  std::vector<SweepPoint> points;
};

/**
 * @brief Writes DIR/index.html, DIR/trace.json (of the first result) and DIR/summary.md.
 * `results`: the simulated schedules to show side by side (the last one is the baseline for speedups
 * when there are two or more). `sweep`: optional sweep results for the line charts.
 * Throws ConfigError when DIR cannot be written. Output is deterministic.
 */
void write_report(const std::string& dir, const std::vector<const schedules::SimulationResult*>& results,
                  const SweepTable* sweep = nullptr);

/** @brief The successful point with the best metric (lowest time, highest speedup/overlap/throughput). */
std::optional<SweepPoint> best_sweep_point(const SweepTable& sweep);

/** @brief The SVG Gantt of one layer (exposed for tests): one lane per stream and rank shown. */
std::string gantt_svg(const schedules::SimulationResult& r, int max_ranks = 4);

/**
 * @brief The pipeline section of a whole step (exposed for tests): per stage a timeline of its micro-batch
 * chunks, its bubble share and its exposed communication by kind; empty for a result that is no step.
 */
std::string pipeline_html(const schedules::SimulationResult& r);

}  // namespace moesim::reports
