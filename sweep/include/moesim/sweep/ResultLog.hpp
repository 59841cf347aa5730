#pragma once
/**
 * @file The sweep's output file, CSV or JSONL by extension. Each finished point is appended and
 * flushed at once, so an interrupted sweep loses nothing it finished; `resume` reads the ids already
 * there (a torn last line from a kill is dropped). When the sweep completes, the file is rewritten in
 * point order, so reruns give byte-identical files whatever the completion order was.
 */
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "moesim/sweep/SweepSpec.hpp"

namespace moesim::sweep {

/** @brief The outcome of one point. */
struct Row {
  std::string id;
  std::map<std::string, std::string> axis_values;
  bool ok = true;
  std::string error;                      ///< one line, when !ok
  std::map<std::string, double> metrics;  ///< absent metrics are written empty
};

class ResultLog {
 public:
  /**
   * @brief Opens `path`. Without `resume` the file must not exist (ConfigError: results are never
   * overwritten). With `resume` an existing file must have been written by the same sweep (same columns).
   */
  ResultLog(std::string path, std::vector<std::string> axis_names, std::vector<std::string> metric_names,
            bool resume);

  /** @brief Ids of the points already in the file. */
  const std::set<std::string>& finished() const { return finished_; }
  /** @brief Appends and flushes one row; safe from several threads. */
  void append(const Row& row);
  /** @brief Rewrites the file with its rows in `order` (atomically: write a temp file, rename). */
  void finalize(const std::vector<Point>& order);
  /** @brief Each row's line as written, by point id (a later line with the same id wins). */
  std::map<std::string, std::string> lines_by_id() const;
  /** @brief Replaces the file's rows by `lines` (id → line as written), in `order` (atomically). */
  void write_in_order(const std::map<std::string, std::string>& lines, const std::vector<Point>& order);
  /** @brief Every row in the file, parsed back (for reports). */
  std::vector<Row> read_all() const;

 private:
  std::string format_row(const Row& row) const;
  std::string header() const;
  Row parse_line(const std::string& line, std::size_t line_number) const;

  std::string path_;
  bool jsonl_;
  std::vector<std::string> axis_names_;
  std::vector<std::string> metric_names_;
  std::set<std::string> finished_;
  std::mutex mutex_;
};

}  // namespace moesim::sweep
