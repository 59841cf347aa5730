#pragma once
/**
 * @file The op DAGs of the FoldMoE family (FoldMoE paper §3–4, Figures 4 and 7).
 *
 * One MoE block is planned once, as token ranges and a host order of stages, and emitted for every
 * rank. Stages of the forward pass (A = attention slice with its TP all-gather/reduce-scatter, R =
 * norm + gate + permute of a router group, D/E/C = Dispatch, experts, Combine of an all-to-all chunk,
 * P = unpermute + residual of a router group):
 *
 *   1a1m, d = 4 (Figure 7)                   compute: A0 R0 A1 R1 E0 A2 R2 E1 P0 A3 R3 E2 P1 E3 P2 P3
 *                                            comm:         D0    D1 C0    D2 C1    D3 C2    C3
 *   aaam, d = 4                              compute: A0 R0 A1 R1 A2 R2 A3 R3 E0 E1 P0 E2 P1 E3 P2 P3
 *   tutel, d = 4 (one slice, one group)      compute: A R E0 E1 E2 E3 P           comm: D0 D1 C0 D2 C1 D3 C2
 * C3 megatron = any of them with d = 1        compute: A R E P                     comm: D C
 *
 * The only dependencies are the paper's (Figure 4): inter-stage (A_s → R_g for every slice s holding
 * tokens of g → D_k → E_k → C_k → P_g) and inter-micro-batch (attention of slice s reads the keys and
 * values of slices < s: its core attention waits for their qkv, and costs more the later it sits, via
 * OpContext::prefix_len). Router groups and attention slices are independent token ranges joined by the
 * token buffer: group g may start once the slices covering its tokens are done.
 *
 * The backward pass runs the same host order reversed, each stage replaced by its gradient (P' CB E' DB
 * R' A'), so it keeps the forward overlap pattern mirrored (§3: "the pipeline schedule executes in
 * reverse order"); attention slice s's qkv gradient also waits for core attention gradients of slices
 * > s (their dK/dV land on its keys). Blocks are barriers: a block starts when the previous one has
 * produced every token. Dense (non-MoE) blocks run whole, with the same TP+SP collectives.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "moesim/schedules/Registry.hpp"
#include "moesim/schedules/Scenario.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::schedules::detail {

/** @brief How a FoldMoE-family schedule slices attention and the MoE layer. */
enum class FoldStyle {
  WHOLE,               ///< attention, then the MoE layer, whole (Megatron-MoE, d = 1)
  MOE_ONLY,            ///< attention whole; Dispatch/experts/Combine pipelined over d chunks (Tutel)
  ALL_THEN_ALL,        ///< d attention slices, then d MoE micro-batches (aAaM)
  ONE_BY_ONE,          ///< one attention slice, one MoE micro-batch, interleaved (1A1M, §4.1)
  ONE_BY_ONE_UNIFORM,  ///< 1A1M with Algorithm 1's time-uniform attention slices and a token buffer (§4.2)
};

/** @brief A stage of one MoE block in host (launch) order. */
enum class FoldStage { ATTN, ROUTE, DISPATCH, EXPERT, COMBINE, POST };

/** @brief One planned stage: its kind and the slice, group or chunk it works on. */
struct FoldStep {
  FoldStage stage;
  int index;
};

/** @brief The token ranges (per sequence) and the forward host order of one MoE block. */
struct FoldPlan {
  int degree = 1;                         ///< all-to-all chunks (MoE micro-batches)
  std::vector<std::int64_t> slice_begin;  ///< attention slices
  std::vector<std::int64_t> slice_len;    ///<
  std::vector<std::int64_t> group_begin;  ///< router groups (gate/permute ... unpermute)
  std::vector<std::int64_t> group_len;    ///<
  std::vector<int> chunk_group;           ///< [chunk] its router group
  std::vector<FoldStep> order;            ///< forward host order
  bool overlaps(int slice, int group) const;
};

/**
 * @brief Plans a block of `style` at degree `degree` (ignored by WHOLE) for sequences of `seq_len` tokens;
 * hidden/heads feed Algorithm 1 for ONE_BY_ONE_UNIFORM.
 */
FoldPlan make_fold_plan(FoldStyle style, std::int64_t seq_len, int degree, std::int64_t hidden,
                        std::int64_t heads);

/**
 * @brief `--opt layout=core-r0.9` (megatron): the MoE layer as Megatron-Core r0.9 runs it with TP. Its
 * parallel_state requires data_parallel_size % expert_model_parallel_size == 0, so with TP t the EP group
 * can only span the ep/t TP groups (one rank of each, cross-node in the paper's setting); experts are split
 * over the TP group, and its all-to-all token dispatcher moves tokens as
 *
 *   permute -> EP all-to-all (ep/t ranks) -> TP all-gather -> experts (1/t of each expert's columns)
 *           -> TP reduce-scatter -> EP all-to-all -> unpermute
 *
 * (megatron/core/transformer/moe/token_dispatcher.py at core_r0.9.0). The default `ep` layout is the one
 * FoldMoE's and Tutel's own MoE layers run: EP over every rank, each expert whole.
 */
bool is_core_r09_layout(const Scenario& s);

/** @brief Builds the whole program of a FoldMoE-family scenario at s.degree (> 0, or WHOLE). */
BuiltProgram build_foldmoe(const Scenario& s, FoldStyle style);

/** @brief The FoldMoE paper's layout rules (TP+SP inside a node, EP over TP groups, training phases). */
void validate_foldmoe(const Scenario& s, bool takes_degree);

}  // namespace moesim::schedules::detail
