#pragma once
/** @file What a run produces: the timing of every op, read by analysis and reports. */
#include <cstdint>
#include <vector>

#include "moesim/sim/Types.hpp"

namespace moesim::sim {

/** @brief Which condition was the last to hold before an op could start. */
enum class Binding { NONE, LAUNCH, STREAM, DEPENDENCY, PEERS };

/** @brief Simulated times of one op (ns). */
struct OpTiming {
  TimeNs launch_begin = -1;  ///< host began launching it (HOST ops: began running)
  TimeNs launched = -1;      ///< host finished launching it
  TimeNs start = -1;         ///< began on the GPU (collectives: this member arrived)
  TimeNs data_start = -1;    ///< collectives: all members arrived and latency began
  TimeNs end = -1;
  Binding binding = Binding::NONE;
  OpId binding_op = NO_OP;  ///< the op that made it ready last (host predecessor for LAUNCH)
};

/** @brief Everything a run produces. */
struct RunResult {
  std::vector<OpTiming> ops;  ///< indexed by OpId
  TimeNs makespan_ns = 0;
  std::uint64_t events = 0;  ///< engine events processed (for throughput benchmarks)
};

}  // namespace moesim::sim
