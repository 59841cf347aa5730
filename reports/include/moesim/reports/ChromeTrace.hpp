#pragma once
/** @file Chrome trace event JSON (opens in Perfetto and chrome://tracing): process = rank, thread = stream.
 */
#include <ostream>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::reports {

/**
 * @brief Writes every op as a complete ("X") event in microseconds; host launches and syncs appear
 * on a "host" thread, collectives carry their wait-for-peers part as a separate "wait" slice.
 */
void write_chrome_trace(std::ostream& out, const schedules::SimulationResult& r);

}  // namespace moesim::reports
