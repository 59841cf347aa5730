#pragma once
/** @file The analytic discrete-event engine. */
#include "moesim/sim/Jitter.hpp"
#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::sim {

/**
 * @brief Runs a Program on a Platform, deterministically.
 *
 * Events order by (time, class, sequence number); simultaneous events are all applied before
 * resource shares are recomputed, so identical inputs give identical timings. Kernels progress as
 * fluids whose rates come from the SM and HBM shares of their GPU; collective data moves as flows
 * with max-min fair rates over links and per-collective ports. Throws InternalError if any op
 * never runs (a dependency that can never be met) and ScheduleError for malformed programs.
 */
RunResult run(const Platform& platform, const Program& program);

/** @brief As run(), with seeded delays; ScheduleError for jitter on a symmetric program or bad quantiles. */
RunResult run(const Platform& platform, const Program& program, const JitterSpec& jitter);

}  // namespace moesim::sim
