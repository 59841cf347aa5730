#pragma once
// Bounded work: what a scenario would cost, checked against documented limits the environment may raise
// (docs/limits.md) before the work is done, so that no input runs for hours or exhausts memory.
#include "moesim/schedules/Scenario.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::schedules::detail {

/**
 * @brief Before anything is built: the routing's token-expert draws (MOESIM_MAX_DRAWS, default 1e10) and
 * the memory of the routing and all-to-all traffic matrices (MOESIM_MAX_MEMORY_GB, default 16).
 * The engine ops themselves are bounded while they are added (sim::max_program_ops()).
 * @throws ScheduleError naming the sizes that drive the estimate and the limit.
 */
void check_scenario_size(const Scenario& s);

/**
 * @brief After building, before the engine runs: ops x runs (--repeat, times up to 12 power-cap passes)
 * must stay within 50 x sim::max_program_ops().
 */
void check_run_work(const Scenario& s, const sim::Program& program, bool power_capped);

}  // namespace moesim::schedules::detail
