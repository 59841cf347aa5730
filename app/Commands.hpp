#pragma once
// The subcommands of `moesim`; each registers its options and returns the action to run.
#include <CLI/CLI.hpp>
#include <functional>
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

}  // namespace moesim::app
