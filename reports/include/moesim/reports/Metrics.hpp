#pragma once
/**
 * @file The headline metrics of a result: one list that the result JSON, sweep result columns and the
 * documentation (reports/METRICS.md, checked by a test) share.
 */
#include <map>
#include <string>
#include <vector>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::reports {

/** @brief How a metric is written: ms to the engine's nanosecond, % to 1e-3, or a whole number. */
enum class Rounding { MILLISECONDS, PERCENT, WHOLE };

struct Metric {
  std::string name;
  Rounding rounding;
  double (*value)(const schedules::SimulationResult&);
  bool sweep_column;  ///< a column of sweep results files
};

/** @brief step_ms, layer_ms, compute_ms, comm_ms, exposed_comm_ms, overlap_pct, ..., in record order. */
const std::vector<Metric>& headline_metrics();

/** @brief `value` rounded as `rounding` says. */
double rounded(double value, Rounding rounding);

/** @brief Sweep result columns: the sweep headline metrics, then "speedup" (when a point has --compare). */
std::vector<std::string> sweep_columns();

/** @brief The sweep headline metrics of `r`, by name (unrounded). */
std::map<std::string, double> sweep_values(const schedules::SimulationResult& r);

}  // namespace moesim::reports
