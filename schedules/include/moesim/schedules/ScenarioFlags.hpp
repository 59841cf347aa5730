#pragma once
/**
 * @file A scenario as the flags of `moesim simulate` state it, and the one translation of those flags into
 * a Scenario. The CLI binds its options to a ScenarioFlags; sweep points and published-validation data
 * name the same flags (without their dashes) and set them as text, so every simulate flag is a sweep axis
 * and a data-file key with the same rules and the same error messages.
 */
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

/** @brief Largest --tokens (and --mbs x --seq) a scenario may ask for: 2^20 tokens per rank. */
inline constexpr std::int64_t kMaxTokensPerRank = std::int64_t{1} << 20;

/** @brief Every flag of a scenario, with the CLI's defaults. */
struct ScenarioFlags {
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
  std::string cluster;            ///< cluster file (--cluster), empty for none
  std::vector<std::string> opts;  ///< schedule options, KEY=VALUE each
  bool per_rank = false;
  std::string degree = "auto";      ///< overlap degree N of a token-pipeline schedule, or auto
  std::string jitter = "none";      ///< straggler/jitter injection (parse_jitter)
  int repeat = 1;                   ///< Monte-Carlo runs
  std::string attention = "fused";  ///< fused (flash) | unfused (materialized scores, as the layer runner)
  std::string power = "cap";        ///< cap (the profile's power model, when it has one) | off
  std::string experts = "grouped";  ///< grouped (one grouped GEMM) | loop (one GEMM per local expert)
  std::string impl = "fused";       ///< implementation profile: fused | a shipped name | a file
  double host_speed = 1;            ///< host speed relative to the CPU the host costs were measured on
  double host_probe =
      0;                ///< the target host's probe (us per op; 0: unused): host speed = impl's probe over it
  int pp = 1, vpp = 1;  ///< pipeline stages and virtual stages per pipeline rank
  int micro_batches = 1;             ///< micro-batches per step and pipeline
  std::string pp_schedule = "1f1b";  ///< pipeline schedule (moesim list schedules)
  std::string optimizer = "none";    ///< none | adam | zero1
  bool fb_overlap = false;           ///< overlapped forward/backward chunk pairs in the steady state
  std::int64_t kv_len = 0;           ///< decode: KV-cache length per sequence
  bool mtp = false;                  ///< decode: multi-token prediction
  double mtp_accept = 0.85;          ///< decode with MTP: acceptance rate of the drafted token

  /**
   * @brief Sets flag `name` (a simulate flag without its dashes: "ep", "moe-comm", "capacity-factor")
   * from text. "opt" takes KEY=VALUE items separated by ';' and adds them. ConfigError naming the flag for
   * an unknown name or a value of the wrong type or out of range.
   */
  void set(const std::string& name, const std::string& value);
  /** @brief Every name set() accepts. */
  static const std::vector<std::string>& names();
};

/** @brief Loads model and profile and parses every flag; ConfigError naming the flag on a bad value. */
Scenario make_scenario(const ScenarioFlags& flags);

/**
 * @brief The scenario a `--compare` baseline runs: the same, with another schedule; only the options
 * every layer-stack schedule shares (sync_splits, shared_overlap, allreduce) carry over.
 */
Scenario baseline_of(const Scenario& primary, const std::string& schedule);

}  // namespace moesim::schedules
