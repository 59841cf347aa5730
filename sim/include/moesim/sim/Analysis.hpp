#pragma once
/**
 * @file What a run means: per-rank busy/exposed figures and the critical path, computed on the op
 * graph (Boost.Graph) after the run. Formulas are written out in reports/METRICS.md.
 */
#include <map>
#include <string>
#include <vector>

#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::sim {

/** @brief Time figures of one rank (ns). Busy figures are unions of intervals, so overlap is not
 * double-counted. */
struct RankMetrics {
  int rank = 0;
  TimeNs end_ns = 0;                               ///< last op end
  TimeNs compute_busy_ns = 0;                      ///< union of kernel intervals
  TimeNs comm_busy_ns = 0;                         ///< union of collective-member intervals
  TimeNs exposed_comm_ns = 0;                      ///< comm time with no kernel running on the rank
  TimeNs idle_ns = 0;                              ///< end_ns minus union(compute, comm)
  TimeNs host_launch_ns = 0;                       ///< time the host thread spent launching
  double overlap_pct = 0;                          ///< 100 · (1 − exposed/comm); 0 when there is no comm
  std::map<std::string, TimeNs> busy_by_category;  ///< sum of op durations per category
};

/** @brief One stretch of the critical path. */
struct PathSegment {
  OpId op = NO_OP;
  TimeNs begin = 0;
  TimeNs end = 0;
  std::string category;  ///< op category, or "launch" (host), "wait" (collective peers), "gap"
};

/** @brief The whole analysis. */
struct Analysis {
  std::vector<RankMetrics> ranks;          ///< one per simulated rank
  std::vector<PathSegment> critical_path;  ///< in time order
  std::map<std::string, TimeNs> critical_path_by_category;
};

/** @brief Throws ScheduleError if the op graph (deps, stream order, host order) has a cycle. */
void check_acyclic(const Program& program);

/** @brief Metrics and the critical path of a finished run. */
Analysis analyze(const Program& program, const RunResult& result);

}  // namespace moesim::sim
