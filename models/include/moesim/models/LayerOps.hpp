#pragma once
/**
 * @file The sub-block operations a schedule places on streams, and the kernels each launches.
 *
 * One transformer layer, forward, in the order the `regular` schedule runs it:
 *
 *   x ─► ATTN_NORM ─► ATTN_QKV ─► ATTN_CORE ─► ATTN_OUT ─► RESIDUAL_ADD ─► h
 *
 *   h ─► MLP_NORM ─┬─► GATE ─► PERMUTE ─► [dispatch] ─► ROUTED_EXPERTS ─► [combine] ─► UNPERMUTE ─┐
 *                  └─► SHARED_EXPERTS ────────────────────────────────────────────► RESIDUAL_ADD ◄┘
 *
 *   h ─► MLP_NORM ──► DENSE_FFN ─► RESIDUAL_ADD          (a dense layer, instead of the MoE block)
 *
 * A model runs MODEL_INPUTS before its first layer and FINAL_NORM after its last; schedules place them only
 * where an implementation profile lists them (cost/IMPL_FORMAT.md, model-level ops).
 *
 * Conventions: a GEMM costs 2·m·n·k FLOPs. Backward splits into DGRAD (input gradients) and WGRAD
 * (weight gradients): each forward GEMM gives one DGRAD GEMM and one WGRAD GEMM of the same FLOPs
 * and bytes; a MEMORY kernel gives one DGRAD kernel moving twice its forward bytes and nothing in
 * WGRAD; backward kernels are listed in execution order (the reverse of forward). Every kernel
 * uses the context's dtype for weights, activations and gradients.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "moesim/models/DType.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/models/OpCost.hpp"

namespace moesim::models {

/** @brief A sub-block of a transformer layer that a schedule places on a stream as one unit. */
enum class LayerOp {
  ATTN_NORM,       ///< Pre-attention norm (one MEMORY kernel).
  ATTN_QKV,        ///< Query/key/value projections (MLA: latent down/up projections and latent norms) + RoPE.
  ATTN_CORE,       ///< Causal scaled-dot-product attention (FlashAttention).
  ATTN_OUT,        ///< Output projection heads·d_v/tp → hidden.
  MLP_NORM,        ///< Pre-MLP norm (one MEMORY kernel).
  GATE,            ///< Router GEMM hidden → experts, then softmax/top-k.
  PERMUTE,         ///< Gather each token once per chosen expert into expert-major order.
  ROUTED_EXPERTS,  ///< The local experts' MLPs as grouped GEMMs.
  UNPERMUTE,       ///< Scatter expert outputs back to token order, weighted by the router, summed over top_k.
  SHARED_EXPERTS,  ///< All shared experts as one dense MLP of width shared_experts·shared_ffn.
  DENSE_FFN,       ///< The dense MLP of a non-MoE layer.
  RESIDUAL_ADD,    ///< Adds a sub-block's output to the residual stream.
  /// Once per forward, before the first layer: what a model prepares for its layers (positions, attention
  /// mask, rotary tables). The in-tree runner prepares them once for all steps: no kernel.
  MODEL_INPUTS,
  FINAL_NORM,  ///< Once per forward, after the last layer: the model's final norm (one MEMORY kernel).
};

/** @brief Which pass of training (or inference, which is FORWARD only) a kernel list is for. */
enum class Pass {
  FORWARD,  ///< Forward pass.
  DGRAD,    ///< Backward: gradients with respect to activations (on the critical path).
  WGRAD,    ///< Backward: gradients with respect to weights (can be deferred).
};

/** @brief The workload one rank runs an op on. */
struct OpContext {
  /**
   * @brief Tokens entering the op on this rank. With attention TP the whole TP group's tokens are
   * replicated on every member, so pass the group's count; a caller that splits the sequence for
   * norms (sequence parallelism) passes the per-rank share for those ops.
   */
  std::int64_t tokens = 0;
  /** @brief ATTN_CORE: the tokens form tokens/seq_len causal sequences of this length (must divide tokens).
   */
  std::int64_t seq_len = 0;
  /**
   * @brief ATTN_CORE: keys before these tokens that every query also attends to: earlier chunks of the
   * same sequences (token micro-batches, chunked prefill) or the KV cache in decode (seq_len 1). 0: whole
   * sequences.
   */
  std::int64_t prefix_len = 0;
  /**
   * @brief ATTN_CORE: the local window this layer's queries attend through (FULL: their whole prefix);
   * callers set it from AttentionSpec::windowed_layer of the layer.
   */
  AttentionWindow window = AttentionWindow::FULL;
  /** @brief ATTN_CORE: the window's tokens (sliding) or chunk length (chunked). */
  std::int64_t window_tokens = 0;
  /** @brief Attention tensor-parallel degree: heads and projection columns split tp ways (must divide heads).
   */
  int tp = 1;
  /** @brief Element type of the whole op. */
  DType dtype = DType::BF16;
  /**
   * @brief ROUTED_EXPERTS: rows each LOCAL expert processes (after capacity). Empty: routed_rows
   * spread evenly over experts_total_local experts.
   */
  std::vector<std::int64_t> expert_tokens;
  /** @brief PERMUTE/UNPERMUTE: token-expert rows this rank permutes (tokens·top_k for alltoall style). */
  std::int64_t routed_rows = 0;
  /** @brief ROUTED_EXPERTS: experts held by this rank; must equal expert_tokens.size() when both are set. */
  int experts_total_local = 0;
  /**
   * @brief ROUTED_EXPERTS: one GEMM per local expert (fc1, activation, fc2 for each expert with rows, after
   * one gather that groups the received rows by expert) instead of one grouped kernel per projection — how
   * implementations without a grouped GEMM run, paying a launch per kernel.
   */
  bool expert_loop = false;
  /**
   * @brief ROUTED_EXPERTS: the received rows arrive ordered by source rank (all-to-all Dispatch), so with
   * more than one local expert a gather groups them by expert before the expert GEMMs and another puts
   * them back in source order for Combine (Megatron's sort_chunks_by_idxs; the layer runner's
   * gather_rows). All-reduce style MoE permutes straight into expert order and needs neither.
   */
  bool regroup_by_expert = false;
  /**
   * @brief ATTN_NORM, MLP_NORM forward: activation tensors summed into the input before it is normalized,
   * one more read of the activations each. FarSkip's sub-blocks take the residual stream without a pending
   * contribution, and the layer runner builds that input inside the norm from its parts.
   */
  int norm_extra_inputs = 0;
};

/**
 * @brief The kernels `op` launches in `pass` on one rank, in launch order; empty when the op has
 * nothing to do in that pass (WGRAD of a norm, SHARED_EXPERTS without shared experts, DENSE_FFN when
 * dense_ffn is 0, ROUTED_EXPERTS without local experts).
 * @throws ScheduleError when the context cannot be run (tp not dividing heads, seq_len not dividing tokens…).
 */
std::vector<KernelCost> layer_op_kernels(const ModelSpec& spec, LayerOp op, Pass pass,
                                         const OpContext& context);

/**
 * @brief Query-key score pairs of one sequence and head: `seq` causal queries after `prefix` keys, through
 * `window` of `window_tokens` (ignored for FULL), the diagonal square counted half (full: seq·prefix +
 * seq²/2).
 */
double attention_score_pairs(std::int64_t seq, std::int64_t prefix, AttentionWindow window,
                             std::int64_t window_tokens);

/** @brief Lower-case name of `op` ("attn_qkv", "routed_experts"...), also the prefix of its kernel names. */
std::string to_string(LayerOp op);

/** @brief "forward", "dgrad" or "wgrad". */
std::string to_string(Pass pass);

}  // namespace moesim::models
