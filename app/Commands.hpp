#pragma once
// The subcommands of `moesim`; each registers its options and returns the action to run.
#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace moesim::app {

/** @brief Runs a parsed subcommand; returns the process exit code. */
using Action = std::function<int()>;

/** @brief Who ran what: stamped into JSON outputs. */
struct Invocation {
  std::vector<std::string> args;
};

void add_simulate(CLI::App& app, const Invocation& invocation, Action& action);
void add_list(CLI::App& app, Action& action);
void add_sweep(CLI::App& app, Action& action);
void add_validate(CLI::App& app, const Invocation& invocation, Action& action);
void add_calibrate(CLI::App& app, Action& action);
void add_bench(CLI::App& app, const Invocation& invocation, Action& action);

/** @brief Writes `what` through `body` to `path` atomically (a failure leaves no torn file), or to stdout for
 * "-"; ConfigError naming the file and the system's reason (a full disk...) when it cannot be written. */
void write_text(const std::string& path, const std::string& what,
                const std::function<void(std::ostream&)>& body);

/** @brief Creates `path` exclusively and atomically (an existing file is never overwritten: path.1, path.2,
 * ... are tried instead), writes `text` and returns the name used. ConfigError when no file can be created.
 */
std::string write_new_file(const std::string& path, const std::string& text);

}  // namespace moesim::app
