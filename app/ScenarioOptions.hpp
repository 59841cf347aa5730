#pragma once
// The scenario flags shared by `simulate` (and later `sweep`), and their translation into a Scenario.
#include <CLI/CLI.hpp>

#include "moesim/schedules/ScenarioFlags.hpp"

namespace moesim::app {

/** @brief The scenario flags are the library's ScenarioFlags: the CLI only binds its options to them. */
using ScenarioOptions = schedules::ScenarioFlags;

void add_scenario_options(CLI::App& sub, ScenarioOptions& o);

}  // namespace moesim::app
