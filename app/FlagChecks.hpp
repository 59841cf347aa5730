#pragma once
// Checks on flags that CLI11's own validators miss: finite numbers (CLI::Range accepts nan and inf), and
// output paths that must be writable and distinct before a long run starts.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "moesim/common/OutputFile.hpp"

namespace moesim::app {

/** @brief A number in [low, high]: not nan, not inf, nothing past the documented limit (docs/limits.md). */
CLI::Validator finite_in(double low, double high);

/** @brief A whole number in [low, high] (CLI11 saturates an unsigned flag that overflows instead of failing).
 */
CLI::Validator integer_in(std::uint64_t low, std::uint64_t high);

/** @brief The files `--report DIR` writes (reports::write_report), as outputs named by the flag. */
std::vector<NamedPath> report_outputs(const std::string& dir);

/**
 * @brief Checks a command's outputs before any long work: each can be written (check_output_path), a
 * --report folder is a folder or can be made, no two outputs share a file and none is an input.
 */
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace moesim::app
