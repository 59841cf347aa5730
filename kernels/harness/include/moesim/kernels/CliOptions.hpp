#pragma once
/**
 * @file Command-line options of the GPU benchmarks (CLI11), in the style of nccl-tests.
 *
 * Each option is declared next to the code that uses it with a long name, an optional one-letter
 * short name, a help line and the variable that holds its default and receives its value. Both
 * `--name value` and `--name=value` are accepted; flags take no value. Byte counts accept the
 * suffixes K, M, G (powers of 1024), e.g. `-b 8 -e 1G`. Every option's value after parsing goes
 * into the result file's "options" object, keyed by its long name.
 */
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moesim/kernels/Json.hpp"

namespace CLI {
class App;
}

namespace moesim::kernels {

/** @brief A bad command line; the message names the option and what was expected. */
class ArgError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** @brief Declares options on a CLI11 app, parses argv into the declared variables, prints usage. */
class CliOptions {
 public:
  CliOptions(std::string program, std::string description);
  ~CliOptions();
  CliOptions(CliOptions&&) noexcept;
  CliOptions& operator=(CliOptions&&) noexcept;

  /** @brief Each add_* throws std::logic_error when the long or short name is already declared. */
  void add_flag(const std::string& name, char short_name, bool* target, const std::string& help);
  void add_int(const std::string& name, char short_name, std::int64_t* target, const std::string& help,
               std::int64_t min_value = INT64_MIN);
  void add_double(const std::string& name, char short_name, double* target, const std::string& help);
  /** @brief A byte count with an optional K/M/G suffix. */
  void add_bytes(const std::string& name, char short_name, std::uint64_t* target, const std::string& help);
  void add_string(const std::string& name, char short_name, std::string* target, const std::string& help);
  /** @brief A comma-separated list of integers, e.g. `1,2,4,8`. */
  void add_int_list(const std::string& name, char short_name, std::vector<std::int64_t>* target,
                    const std::string& help);
  /** @brief A comma-separated list of words, e.g. `tf32,bf16`. */
  void add_string_list(const std::string& name, char short_name, std::vector<std::string>* target,
                       const std::string& help);

  /**
   * @brief Parses the command line into the declared variables.
   * @return false when `-h`/`--help` was given (the caller prints usage() and exits 0).
   * @throws ArgError on an unknown option, a missing value or a value that does not parse.
   */
  bool parse(int argc, const char* const* argv);

  /** @brief The usage text: one line per option with its default. */
  std::string usage() const;
  /** @brief argv as given to parse(), program name first. */
  const std::vector<std::string>& command_line() const { return command_line_; }
  /** @brief Every option's value after parsing, as a JSON object keyed by long name, in declaration order. */
  Json values_as_json() const;

 private:
  void remember(const std::string& name, std::function<Json()> value);

  std::unique_ptr<CLI::App> app_;
  std::vector<std::pair<std::string, std::function<Json()>>> values_;
  std::vector<std::string> command_line_;
};

}  // namespace moesim::kernels
