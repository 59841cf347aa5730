#pragma once
/** @file The text summary `moesim simulate` prints: nccl-tests style, '#' header lines, a units row. */
#include <ostream>
#include <vector>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::reports {

/** @brief One row per result (the first is the one asked for); speedups are against the last row when there
 * are two. */
void print_summary(std::ostream& out, const std::vector<const schedules::SimulationResult*>& results);

}  // namespace moesim::reports
