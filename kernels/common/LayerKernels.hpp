#pragma once
/**
 * @file Memory-bound kernels of a MoE transformer layer, shared by memory_bench, attention_bench
 * and layer_runner (one copy of each kernel). bf16 in and out, fp32 arithmetic; rows move as
 * 16-byte vectors, so every row width must be a multiple of 8 values. Each function enqueues on
 * `stream` and checks the launch.
 */
#include <cstddef>
#include <cstdint>

#include "gpu_runtime.hpp"

namespace moesim::kernels {

/** @brief y[r] = rmsnorm(x[r] + a[r] + b[r]) · gamma; `a`, `b` may be null (the fused-add form keeps
 * FarSkip's extra residual inputs from costing a separate kernel). */
void launch_rmsnorm(const bf16_t* x, const bf16_t* a, const bf16_t* b, const bf16_t* gamma, bf16_t* y,
                    std::int64_t rows, std::int64_t width, float epsilon, cudaStream_t stream);

/** @brief y[r] = silu(x[r, :F]) · x[r, F:] for x [rows, 2F], y [rows, F]. */
void launch_swiglu(const bf16_t* x, bf16_t* y, std::int64_t rows, std::int64_t ffn, cudaStream_t stream);

/** @brief y = a + scale·b over `count` values (y may alias a). */
void launch_add(const bf16_t* a, const bf16_t* b, bf16_t* y, std::size_t count, float scale,
                cudaStream_t stream);

/** @brief y[p] = x[source_row[p]] for p < rows (MoE permute, regroup). */
void launch_gather_rows(const bf16_t* x, const int* source_row, bf16_t* y, std::int64_t rows,
                        std::int64_t width, cudaStream_t stream);

/**
 * @brief y[t] = Σ_j weight[t·k+j] · x[position[t·k+j]] (+ extra[t] when non-null); positions < 0
 * are skipped (slots handled by another rank). MoE unpermute / weighted combine.
 */
void launch_unpermute(const bf16_t* x, const int* position, const float* weight, const bf16_t* extra,
                      bf16_t* y, std::int64_t tokens, std::int64_t width, int top_k, cudaStream_t stream);

/** @brief Causal softmax of fp32 scores [rows, length] (row i of each head sees keys <= i mod length). */
void launch_causal_softmax(const float* scores, bf16_t* probabilities, std::int64_t rows, std::int64_t length,
                           cudaStream_t stream);

/** @brief Largest expert count launch_gate_topk handles. */
inline constexpr int kGateMaxExperts = 512;

/**
 * @brief Router: softmax over `experts` logits per token, top-k (indices and renormalized
 * weights), and per-expert slot counts added into `counts` (zero it first).
 */
void launch_gate_topk(const bf16_t* logits, int* top_index, float* top_weight, int* counts,
                      std::int64_t tokens, int experts, int top_k, cudaStream_t stream);

/**
 * @brief Attention layout changes. split: qkv [B·S, (H + 2·KV)·d] → q, k, v [B·H, S, d], KV heads
 * expanded to the H query heads (GQA: head h reads KV head h / (H/KV)). merge: o [B·H, S, d] →
 * out [B·S, H·d].
 */
void launch_split_heads(const bf16_t* qkv, bf16_t* q, bf16_t* k, bf16_t* v, std::int64_t batch,
                        std::int64_t seq, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                        cudaStream_t stream);
void launch_merge_heads(const bf16_t* o, bf16_t* out, std::int64_t batch, std::int64_t seq,
                        std::int64_t heads, std::int64_t head_dim, cudaStream_t stream);

}  // namespace moesim::kernels
