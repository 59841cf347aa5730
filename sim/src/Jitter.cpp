// Seeded log-normal delays for straggler and jitter studies.
#include <cmath>
#include <numbers>
#include <random>

#include "moesim/common/Error.hpp"
#include "moesim/sim/Engine.hpp"

namespace moesim::sim {

namespace {
/** Uniform in (0, 1] from the top 53 bits, so the result never depends on a library's distribution. */
double unit(std::mt19937_64& gen) {
  return (static_cast<double>(gen() >> 11) + 1.0) / 9007199254740992.0;
}
}  // namespace

std::vector<double> draw_delays(const JitterSpec& jitter, std::size_t count) {
  std::vector<double> out(count, 0.0);
  if (jitter.scope == JitterScope::NONE) return out;
  if (!(jitter.median_ns > 0) || !(jitter.p95_ns >= jitter.median_ns))
    throw ScheduleError("jitter: need median > 0 and p95 >= median");
  const double mu = std::log(jitter.median_ns);
  const double sigma = std::log(jitter.p95_ns / jitter.median_ns) / 1.6448536269514722;
  std::mt19937_64 gen(jitter.seed);
  for (std::size_t i = 0; i < count; ++i) {
    const double u1 = unit(gen), u2 = unit(gen);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    out[i] = std::exp(mu + sigma * z);
  }
  return out;
}

}  // namespace moesim::sim
