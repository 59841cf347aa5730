#pragma once
/**
 * @file The GPU microbenchmark suites, as kernels/tools/bench_suites.tsv lists them: the one table that
 * `moesim bench` and kernels/tools/run_calibration.sh share.
 */
#include <string>
#include <vector>

namespace moesim::calibrate {

/** @brief One program run of a suite. */
struct BenchStep {
  std::string suite;
  std::string step;     ///< result file stem
  std::string program;  ///< executable of a kernels/ build
  bool all_gpus = false;
  std::string args;  ///< the rest of the command line
};

/** @brief Parses the table; ConfigError "file:LINE: ..." for a malformed line. */
std::vector<BenchStep> parse_bench_suites(const std::string& text, const std::string& file);

/** @brief Reads the table at `path`. */
std::vector<BenchStep> load_bench_suites(const std::string& path);

/** @brief The steps of `suites`, in order; ConfigError at --suite naming the known suites for an unknown one.
 */
std::vector<BenchStep> steps_of(const std::vector<BenchStep>& table, const std::vector<std::string>& suites);

}  // namespace moesim::calibrate
