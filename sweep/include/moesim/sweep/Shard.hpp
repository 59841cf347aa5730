#pragma once
/**
 * @file Splitting a sweep over independent jobs (a Slurm job array, several machines) and merging
 * their result files back into exactly the file one run would have written.
 *
 * Shard K of N (1-based) holds the points whose index in the sweep's expanded order is congruent to
 * K-1 modulo N: deterministic, disjoint and covering, and interleaved so every shard gets a similar
 * mix of cheap and expensive points. Each shard's result file gets a manifest beside it
 * (RESULTS.shard.json: the sweep file's text and "K/N"), so a merge needs nothing but the directories.
 */
#include <string>
#include <vector>

#include "moesim/sweep/SweepSpec.hpp"

namespace moesim::sweep {

struct Shard {
  int index = 1;  ///< K, 1-based
  int count = 1;  ///< N
};

/** @brief "K/N" with 1 <= K <= N; ConfigError naming `flag` otherwise. */
Shard parse_shard(const std::string& text, const std::string& flag = "--shard");

/** @brief The points of `shard`, in the sweep's order. */
std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& shard);

/** @brief Where a result file's shard manifest lives. */
std::string manifest_path(const std::string& results_path);

/** @brief Writes the manifest of `results_path`: the sweep file's text, its name and the shard. */
void write_shard_manifest(const std::string& results_path, const std::string& spec_path, const Shard& shard);

struct MergeSummary {
  std::size_t points = 0;      ///< rows written
  std::size_t files = 0;       ///< shard result files read
  std::size_t duplicates = 0;  ///< identical rows seen more than once (a shard rerun elsewhere)
  int shards = 0;              ///< N
};

/**
 * @brief Merges the shard result files found in `dirs` (each a directory holding RESULTS and
 * RESULTS.shard.json pairs, or a result file itself) into `out`, in the sweep's point order, so the
 * file is byte-identical to one unsharded run. ConfigError when the manifests disagree on the sweep,
 * a shard or a point is missing, or one point has two different rows; `out` must not exist.
 */
MergeSummary merge_shards(const std::string& out, const std::vector<std::string>& dirs,
                          const std::vector<std::string>& metric_names);

}  // namespace moesim::sweep
