#pragma once
/** @file Seeded random delays for straggler and jitter studies: what a scenario asks of the engine. */
#include <cstdint>
#include <vector>

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

}  // namespace moesim::sim
