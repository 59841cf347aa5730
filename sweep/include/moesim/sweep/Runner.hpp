#pragma once
/** @file Runs sweep points on a pool of threads, writing each row as it finishes. */
#include <atomic>
#include <chrono>
#include <functional>
#include <ostream>
#include <vector>

#include "moesim/sweep/ResultLog.hpp"
#include "moesim/sweep/SweepSpec.hpp"

namespace moesim::sweep {

/** @brief Turns one point into its row; must not throw for bad points (record the error in the row). */
using PointRunner = std::function<Row(const Point&)>;

struct RunSummary {
  std::size_t total = 0;    ///< points in the sweep
  std::size_t skipped = 0;  ///< already in the file (resume)
  std::size_t ran = 0;
  std::size_t failed = 0;
  bool interrupted = false;
  /** @brief Points still simulating when the grace after an interrupt ran out: they run on, unwritten, on
   * detached threads, so the caller must end the process (std::_Exit) rather than return from main. */
  std::size_t abandoned = 0;
};

/**
 * @brief Runs every point not yet in `log` on `jobs` threads. Progress goes to `progress`: a bar with
 * ETA redrawn in place when `tty`, a plain line per point otherwise. When `stop` turns true (SIGINT), no
 * new point starts; those running get `grace` to finish and be written, and any still running then are
 * abandoned (RunSummary::abandoned): the sweep stops promptly and keeps every point it wrote.
 * @throws ConfigError (rethrown from the worker) when a finished row cannot be written; no point starts
 * after that.
 */
RunSummary run_sweep(const std::vector<Point>& points, int jobs, const PointRunner& run, ResultLog& log,
                     const std::atomic<bool>& stop, std::ostream& progress, bool tty,
                     std::chrono::milliseconds grace = std::chrono::milliseconds(500));

}  // namespace moesim::sweep
