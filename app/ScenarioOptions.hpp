#pragma once
// The scenario flags shared by `simulate` (and later `sweep`), and their translation into a Scenario.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::app {

struct ScenarioOptions {
  std::string model = "deepseek-v2-lite";
  std::string hw = "mi325x";
  std::string schedule = "regular";
  std::string phase = "train";
  std::string moe_comm = "alltoall";
  int ep = 8, tp = 1, dp = 1, nodes = 0, layers = 0;
  std::int64_t tokens = 0, mbs = 1, seq = 4096;
  std::string routing = "balanced";
  std::uint64_t seed = 1;
  std::string dtype = "bf16";
  double capacity_factor = 0;
  std::string engine = "analytic";
  std::vector<std::string> opts;
  bool per_rank = false;
  std::string degree = "auto";      ///< foldmoe schedules: overlap degree N, or auto
  std::string jitter = "none";      ///< straggler/jitter injection (schedules::parse_jitter)
  int repeat = 1;                   ///< Monte-Carlo runs
  std::string attention = "fused";  ///< fused (flash) | unfused (materialized scores, as the layer runner)
  std::string power = "cap";        ///< cap (the profile's power model, when it has one) | off
  std::string experts = "grouped";  ///< grouped (one grouped GEMM) | loop (one GEMM per local expert)
};

void add_scenario_options(CLI::App& sub, ScenarioOptions& o);

/**
 * @brief The scenario a `--compare` baseline runs: the same, with another schedule; only the options
 * every schedule shares (sync_splits, shared_overlap) carry over.
 */
schedules::Scenario baseline_of(const schedules::Scenario& primary, const std::string& schedule);

/** @brief Loads model and profile, parses enums; ConfigError naming the flag on bad values. */
schedules::Scenario make_scenario(const ScenarioOptions& o);

}  // namespace moesim::app
