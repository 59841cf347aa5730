#pragma once
/**
 * @file Token-to-expert routing: the distribution a workload asks for (`--routing`) and the
 * per-rank, per-expert token counts drawn from it, deterministically for a seed.
 *
 * Determinism: all randomness comes from std::mt19937_64 (whose output the C++ standard fixes)
 * through this library's own integer→double and sampling code, never std::*_distribution (whose
 * output differs between standard libraries). Zipf weights use std::pow, so a libm that rounds pow
 * differently could flip a draw that lands within one ulp of a bucket boundary.
 */
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace moesim::models {

/** @brief How tokens choose experts. */
struct RoutingSpec {
  /** @brief The distribution family. */
  enum class Kind {
    BALANCED,   ///< Every rank sends exactly tokens·top_k/experts slots to every expert.
    UNIFORM,    ///< Each token picks top_k distinct experts uniformly at random.
    ZIPF,       ///< Expert popularity ∝ 1/(r+1)^s over a seed-determined ranking r of the experts.
    HISTOGRAM,  ///< Expert popularity ∝ a recorded per-expert weight.
    RECORDED,   ///< The exact slots per (source rank, expert) of a real run (e.g. the layer runner's).
  };
  /** @brief Distribution family. */
  Kind kind = Kind::BALANCED;
  /** @brief ZIPF: the exponent s (> 0). */
  double zipf_s = 0;
  /** @brief HISTOGRAM: one non-negative weight per expert, not all zero. */
  std::vector<double> histogram;
  /** @brief HISTOGRAM / RECORDED: the file the numbers came from, for error messages. */
  std::string histogram_file;
  /** @brief RECORDED: [src_rank][expert] token slots, each row summing to tokens_per_rank · top_k. */
  std::vector<std::vector<std::int64_t>> recorded;
};

/**
 * @brief Parses `--routing`: `balanced`, `uniform`, `zipf:S` (S > 0), `histogram:FILE.json`, where
 * FILE holds a JSON array of per-expert weights, or `recorded:FILE.json`, where FILE holds a JSON array
 * with one array of per-expert slot counts per source rank (a real run's routing).
 * @throws ConfigError with pointer "--routing" listing the accepted forms for bad text; a
 * ConfigError naming FILE (and the array index) for a bad histogram file.
 */
RoutingSpec parse_routing(const std::string& text);

/**
 * @brief A recorded routing matrix, [src_rank][expert] token slots, from `value` found at JSON `pointer` of
 * `file` (a `recorded:` file, or a layer-runner record's tokens_to_expert).
 * @throws ConfigError naming the file and the pointer of the first value that is not a count.
 */
std::vector<std::vector<std::int64_t>> recorded_slots(const nlohmann::json& value, const std::string& file,
                                                      const std::string& pointer);

/** @brief Token-expert slots, before anything is sent: who sends how many tokens to which expert. */
struct RoutingPlan {
  /** @brief [src_rank][expert]: token slots rank src_rank routes to the expert, after capacity. */
  std::vector<std::vector<std::int64_t>> tokens_to_expert;
  /** @brief The per-expert cap on slots summed over ranks; 0 when there is no capacity limit. */
  std::int64_t capacity_per_expert = 0;
  /** @brief Slots dropped because their expert was full. */
  std::int64_t dropped_slots = 0;
};

/**
 * @brief Draws a routing of `tokens_per_rank` tokens on each of `ranks` ranks to `top_k` of `experts`.
 *
 * - BALANCED: rank r sends floor(T·k/E) slots to every expert, and the T·k mod E remaining slots to
 *   experts (r·rem + j) mod E, j < rem, so remainders rotate over experts and totals stay within one.
 * - UNIFORM, ZIPF, HISTOGRAM: each token draws top_k distinct experts, one after the other, each
 *   with probability ∝ its weight among the experts it has not chosen yet.
 * - RECORDED: the spec's matrix as it is; it must have `ranks` rows of `experts` counts, each row
 *   summing to tokens_per_rank · top_k (ScheduleError otherwise, naming the file).
 * - Capacity (capacity_factor > 0): an expert receives at most C = ceil(capacity_factor·T·k·ranks/E)
 *   slots in total. An over-subscribed expert's C slots are shared max-min fairly among the ranks
 *   that want it (each gets min(demand, level), leftovers one each to the lowest ranks); the rest
 *   is dropped. capacity_factor <= 0: no limit.
 *
 * Every rank draws from its own stream seeded from (seed, rank), so a rank's routing does not
 * depend on how many ranks there are.
 * @throws ConfigError when a histogram's length differs from `experts`; ScheduleError for
 * impossible sizes (top_k > experts, ranks < 1...).
 */
RoutingPlan route_tokens(const RoutingSpec& spec, std::uint64_t seed, int ranks, std::int64_t tokens_per_rank,
                         int experts, int top_k, double capacity_factor);

/** @brief Slots each expert receives, summed over source ranks. */
std::vector<std::int64_t> expert_load(const RoutingPlan& plan);

/**
 * @brief Rows each expert held by `rank` processes when the plan's experts are placed contiguously
 * over `ep` ranks (expert e on rank e / (experts/ep)): OpContext::expert_tokens for ROUTED_EXPERTS.
 * @throws ScheduleError when ep does not divide the experts or rank is not in [0, ep).
 */
std::vector<std::int64_t> local_expert_load(const RoutingPlan& plan, int ep, int rank);

/**
 * @brief The EP dispatch all-to-all as a per-pair byte matrix [src][dst]: each slot sends
 * `bytes_per_token` from its source rank to the rank holding its expert (contiguous placement as in
 * local_expert_load). The diagonal is the traffic a rank keeps; combine is the transpose. One
 * message per slot (Megatron's alltoall dispatcher; no per-rank deduplication as in DeepEP).
 * @throws ScheduleError unless the plan has exactly `ep` source ranks and ep divides the experts.
 */
std::vector<std::vector<double>> dispatch_bytes(const RoutingPlan& plan, int ep, double bytes_per_token);

}  // namespace moesim::models
