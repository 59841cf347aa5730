#pragma once
/**
 * @file The output of one benchmark run: '#' header, a table, a footer, and a JSON file.
 *
 * The JSON file is claimed (created exclusively, never overwritten) when the log is made and
 * written when finish() runs; a log destroyed without finish() (an exception) still writes what
 * it has, with "complete": false. Layout of the JSON file:
 *
 *   { "schema_version", "tool", "tool_version", "git_sha", "benchmark", "args", "options",
 *     "start_time", <context keys: "gpus", "driver", "libraries", "environment", ...>,
 *     "results": [ one object per table row ], "summary": {...}, "end_time", "complete" }
 */
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "moesim/kernels/ExclusiveFile.hpp"
#include "moesim/kernels/Json.hpp"
#include "moesim/kernels/TextTable.hpp"

namespace moesim::kernels {

/** @brief Version of the JSON layout above; bump it when a key changes meaning. */
inline constexpr int kResultSchemaVersion = 1;

/** @brief Identity of the program that produced a result file. */
struct ToolIdentity {
  std::string benchmark;     ///< e.g. "gemm"
  std::string tool_version;  ///< the kernels' version
  std::string git_sha;       ///< source revision, "unknown" when not built from git
};

/** @brief UTC time as ISO 8601 with seconds, e.g. "2026-11-21T21:07:00Z". */
std::string utc_timestamp_now();

/** @brief Text log to a stream plus an optional JSON result file. */
class ResultLog {
 public:
  /**
   * @param json_path where to write the JSON file ("" for none); an existing file is never
   *        overwritten, the next free name.N is taken instead.
   */
  ResultLog(ToolIdentity identity, std::vector<std::string> command_line, Json options, std::ostream& text,
            const std::string& json_path);
  ~ResultLog();
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  /** @brief Adds a top-level JSON key (device list, versions, environment). */
  void add_context(const std::string& key, Json value);
  /** @brief Prints "# " + line. */
  void comment(const std::string& line);
  /** @brief Prints a '***WARNING*** ' comment line and records it in the JSON "warnings" list. */
  void warning(const std::string& line);
  /** @brief Starts a table: prints its two header rows; later rows must match its columns. */
  void start_table(const TextTable& table);
  /** @brief Prints one data row and appends its JSON record to "results". */
  void add_row(const std::vector<std::string>& cells, Json record);
  /** @brief Sets one key of the JSON "summary" object. */
  void set_summary(const std::string& key, Json value);
  /** @brief Writes the JSON file (complete) and prints where it went; idempotent. */
  void finish();

  const std::string& json_path() const { return json_path_; }

 private:
  void write_json(bool complete);

  std::ostream& text_;
  Json root_ = Json::object();
  Json results_ = Json::array();
  Json summary_ = Json::object();
  Json warnings_ = Json::array();
  std::unique_ptr<TextTable> table_;
  std::unique_ptr<ExclusiveFile> file_;
  std::string json_path_;
  bool finished_ = false;
};

}  // namespace moesim::kernels
