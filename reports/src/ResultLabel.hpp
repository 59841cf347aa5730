#pragma once
/** @file How a result is named in the summary table and the HTML report: one spelling for both. */
#include <string>

#include "moesim/schedules/Simulation.hpp"
#include "moesim/sim/BackendName.hpp"

namespace moesim::reports {

/** @brief Empty for the default engine: a run on another one says so wherever it is named. */
inline std::string engine_tag(const schedules::SimulationResult& r) {
  return r.scenario.engine == sim::Backend::ANALYTIC ? "" : " [" + sim::to_string(r.scenario.engine) + "]";
}

/** @brief The schedule, its options as key=value after `separator`, and the engine tag. */
inline std::string result_label(const schedules::SimulationResult& r, const std::string& separator) {
  std::string label = r.scenario.schedule;
  for (const auto& [k, v] : r.scenario.options) label += separator + k + "=" + v;
  return label + engine_tag(r);
}

}  // namespace moesim::reports
