#pragma once
/**
 * @file Token→expert routing generated on the host, and what each rank does with it.
 *
 * The runner does not use the gate's top-k choice: a routing fixed at setup makes every schedule
 * of a config move exactly the same rows, and lets the simulator be given the same matrix
 * (tokens_to_expert). Kinds:
 *   balanced  every rank sends floor or ceil of T·k/E slots to every expert: slot (t, j) goes to
 *             expert (t·k + j + rank·((T·k) mod E)) mod E, so the remainder rotates over ranks;
 *             tokens are then shuffled (seeded), which changes which rows move, not how many.
 *   uniform   each token draws k distinct experts with equal weights;
 *   zipf:s    ... with weights ∝ 1/(r+1)^s, r = the expert's rank in a seeded permutation.
 * Gate weights of a token are random positive numbers normalized to sum to 1.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::kernels::layer {

enum class RoutingKind { BALANCED, UNIFORM, ZIPF };

struct RoutingSpec {
  RoutingKind kind = RoutingKind::BALANCED;
  double zipf_exponent = 0;
  std::string text;  ///< as given on the command line
};

/** @brief "balanced", "uniform" or "zipf:S" (S > 0). @throws std::invalid_argument */
RoutingSpec parse_routing(const std::string& text);

/** @brief One rank's tokens: experts and weights of slot (t, j) at index t·k + j. */
struct TokenRouting {
  std::vector<int> expert;
  std::vector<float> weight;
};

/** @brief Routes `tokens` tokens on each of `ranks` ranks (deterministic in seed and rank). */
std::vector<TokenRouting> route_tokens(const RoutingSpec& spec, std::uint64_t seed, int ranks,
                                       std::int64_t tokens, int experts, int top_k);

/** @brief tokens_to_expert[src][e]: slots of rank src routed to expert e. */
std::vector<std::vector<std::int64_t>> tokens_to_expert(const std::vector<TokenRouting>& routing,
                                                        int experts);

/**
 * @brief One rank's part of an EP all-to-all layer (experts placed contiguously: expert e on rank
 * e / (E/EP)). Send rows are the rank's slots sorted by expert (hence by destination); the receive
 * buffer holds each source's rows in source order; the routed-expert step regroups them per local
 * expert and back.
 */
struct AlltoallPlan {
  std::vector<int> permute_source;  ///< [T·k] token whose row goes to send row p
  std::vector<int> slot_position;   ///< [T·k] send row (= combine receive row) of slot (t, j)
  std::vector<float> slot_weight;   ///< [T·k]
  std::vector<std::int64_t> send_rows, send_offset;  ///< [ranks]
  std::vector<std::int64_t> recv_rows, recv_offset;  ///< [ranks]
  std::int64_t recv_total = 0;
  std::vector<int> regroup_source;        ///< [recv_total] expert-order row q <- receive row
  std::vector<int> ungroup_source;        ///< [recv_total] receive row i <- expert-order row
  std::vector<std::int64_t> expert_rows;  ///< [E/EP] rows of each local expert
};

std::vector<AlltoallPlan> plan_alltoall(const std::vector<TokenRouting>& routing, int experts, int top_k);

/**
 * @brief One rank's part of a replicated-batch (allreduce, vLLM-style) layer: the slots of the
 * shared routing that go to this rank's experts, sorted by expert; other slots have position -1.
 */
struct AllreducePlan {
  std::vector<int> permute_source;        ///< [local rows] token of each local row
  std::vector<int> slot_position;         ///< [T·k] local row of slot (t, j), or -1
  std::vector<float> slot_weight;         ///< [T·k]
  std::vector<std::int64_t> expert_rows;  ///< [E/EP]
};

std::vector<AllreducePlan> plan_allreduce(const TokenRouting& routing, int experts, int top_k, int ranks);

}  // namespace moesim::kernels::layer
