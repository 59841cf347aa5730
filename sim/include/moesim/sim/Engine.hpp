#pragma once
/** @file The analytic discrete-event engine. */
#include <cstdint>
#include <vector>

#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::sim {

/** @brief Where seeded random delays are injected (straggler/jitter studies). */
enum class JitterScope {
  NONE,        ///< deterministic timings
  RANK_START,  ///< each rank's host thread starts late by one draw (a straggler GPU entering the layer)
  OP_LAUNCH,   ///< every host-launched op's launch takes one extra draw (launch/OS jitter per kernel)
};

/**
 * @brief Delays drawn from a log-normal distribution given by its median and 95th percentile:
 * X = exp(mu + sigma·Z), mu = ln(median), sigma = ln(p95/median) / 1.6449 (Z standard normal, drawn
 * by Box-Muller from std::mt19937_64, whose output the standard fixes). Draws are taken in a fixed
 * order (ranks, then ops by id), so the same seed gives the same run.
 */
struct JitterSpec {
  JitterScope scope = JitterScope::NONE;
  double median_ns = 0;
  double p95_ns = 0;  ///< >= median_ns
  std::uint64_t seed = 1;
};

/** @brief The `count` delays (ns) a JitterSpec draws, in order; all 0 for NONE. */
std::vector<double> draw_delays(const JitterSpec& jitter, std::size_t count);

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
