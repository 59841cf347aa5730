// `--jitter` / `--repeat`: parsing, and FlashMoE Table 2 presets resolved against the scenario.
#include <cmath>

#include "moesim/common/Error.hpp"
#include "moesim/schedules/FlashMoe.hpp"
#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

namespace {
constexpr double kMaxDelayUs = 1e7;

[[noreturn]] void bad(const std::string& text) {
  throw ConfigError(
      "", "--jitter",
      "= \"" + text.substr(0, 60) +
          "\": expected none, rank:MEDIAN_US,P95_US, op:MEDIAN_US,P95_US (0 < median <= p95 <= 1e7), "
          "table2-vm or table2-hpc");
}
}  // namespace

Noise parse_jitter(const std::string& text, int repeat) {
  if (repeat < 1 || repeat > 100000)
    throw ConfigError("", "--repeat", "= " + std::to_string(repeat) + ": expected an integer in [1, 100000]");
  Noise n;
  n.repeat = repeat;
  if (text == "none" || text.empty()) return n;
  for (const auto& p : straggler_presets()) {
    if (text == p.name) {
      n.preset = p.name;
      n.scope = sim::JitterScope::RANK_START;
      return n;
    }
  }
  const auto colon = text.find(':');
  const auto comma = text.find(',');
  if (colon == std::string::npos || comma == std::string::npos || comma < colon) bad(text);
  const std::string kind = text.substr(0, colon);
  if (kind == "rank") {
    n.scope = sim::JitterScope::RANK_START;
  } else if (kind == "op") {
    n.scope = sim::JitterScope::OP_LAUNCH;
  } else {
    bad(text);
  }
  try {
    std::size_t a = 0, b = 0;
    const std::string m = text.substr(colon + 1, comma - colon - 1), q = text.substr(comma + 1);
    n.median_us = std::stod(m, &a);
    n.p95_us = std::stod(q, &b);
    if (a != m.size() || b != q.size()) bad(text);
  } catch (const std::logic_error&) {
    bad(text);
  }
  // A delay beyond 10 s (docs/limits.md) is no straggler; its draws could overflow simulated time.
  if (!(n.median_us > 0) || !(n.p95_us >= n.median_us) || !(n.p95_us <= kMaxDelayUs)) bad(text);
  return n;
}

/**
 * Table 2 gives total/actual time of a synchronous all-to-all (median 3.1x, p95 11.4x on the VM). A preset
 * therefore delays each rank's start by a log-normal draw whose median and p95 are (ratio − 1) times the
 * scenario's alone-time Dispatch all-to-all (profile table, tokens·top_k·hidden 16-bit elements per rank).
 * This reading of Table 2 is our interpretation (E): the paper does not give per-GPU delays.
 */
Noise resolve_noise(const Scenario& s) {
  Noise n = s.noise;
  if (n.preset.empty()) return n;
  const int g = s.parallel.ep;
  // 16-bit elements whatever --dtype says, so an fp32 run and an fp16 run draw the same delays.
  const double bytes = static_cast<double>(s.workload.tokens) * s.model.moe.top_k * s.model.hidden * 2.0;
  const double alone_us =
      g > 1
          ? s.hw.collective_time_s(hw::CollectiveKind::ALL_TO_ALL, g, hw::CollectiveScope::INTRA, bytes) * 1e6
          : 1.0;
  for (const auto& p : straggler_presets()) {
    if (p.name != n.preset) continue;
    n.median_us = (p.median_ratio - 1.0) * alone_us;
    n.p95_us = (p.p95_ratio - 1.0) * alone_us;
  }
  return n;
}

}  // namespace moesim::schedules
