#pragma once
/** @file The result record of a simulation as JSON (format in reports/METRICS.md). */
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::reports {

/** @brief Who produced a record: stamped into every JSON output (no wall-clock time, so reruns are
 * byte-identical). */
struct RunContext {
  std::string tool_version;
  std::string git_sha;
  std::vector<std::string> args;
};

/** @brief The scenario as it was simulated (model, hardware, parallelism, workload, schedule). */
nlohmann::json scenario_json(const schedules::Scenario& s);

/** @brief Headline metrics of one result. */
nlohmann::json metrics_json(const schedules::SimulationResult& r);

/**
 * @brief The whole record: schema_version, tool, args, scenario, metrics, per-rank figures, critical
 * path shares, FarSkip Eq. (9) when it applies, and — with a baseline — `speedup_vs` and the baseline's
 * metrics.
 */
nlohmann::json result_json(const schedules::SimulationResult& r, const schedules::SimulationResult* baseline,
                           const RunContext& context);

}  // namespace moesim::reports
