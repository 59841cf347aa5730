#pragma once
/** @file The cost of one GPU kernel launch: what it computes and what it moves through HBM. */
#include <cstdint>
#include <string>

namespace moesim::models {

/** @brief Which efficiency table of a hardware profile times the kernel. */
enum class KernelClass {
  GEMM,          ///< One dense matrix multiply, timed by its shape.
  GROUPED_GEMM,  ///< One launch that multiplies `groups` independent matrices (MoE experts).
  ATTENTION,     ///< A fused (Flash) attention kernel, timed by sequence length and head width.
  MEMORY,        ///< Bandwidth-bound elementwise/reduction/copy kernel, timed by `bytes`.
  ROUTER_TOPK,   ///< The router's softmax + top-k selection, timed by `route` where the profile measured it.
};

/**
 * @brief C[m,n] = A[m,k]·B[k,n]. For a grouped GEMM, `groups` matrices of the same n and k; m is the
 * mean rows per group rounded to nearest (the exact row total is in KernelCost::flops).
 */
struct GemmShape {
  std::int64_t m = 0;       ///< Rows of A and C (mean per group for grouped GEMMs).
  std::int64_t n = 0;       ///< Columns of B and C.
  std::int64_t k = 0;       ///< Reduction width.
  std::int64_t groups = 1;  ///< Independent problems in one launch (1 for a plain GEMM).
};

/** @brief What a ROUTER_TOPK kernel selects: top_k of `experts` scores for each of `tokens` tokens. */
struct RouteShape {
  std::int64_t tokens = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
};

/**
 * @brief One kernel launch. Launch overhead is paid per KernelCost, so a sub-block returns as many
 * as the frameworks it models really launch.
 */
struct KernelCost {
  /** @brief Stable label "<op>.<kernel>[.dgrad|.wgrad]", e.g. "routed_experts.fc1.wgrad". */
  std::string name;
  /** @brief Which efficiency table applies. */
  KernelClass kind = KernelClass::MEMORY;
  /** @brief Part of the backward pass (DGRAD or WGRAD): attention tables time the two passes apart. */
  bool backward = false;
  /** @brief Floating-point operations (a multiply-add counts 2). MEMORY kernels carry 0. */
  double flops = 0;
  /**
   * @brief HBM bytes read plus written: for a GEMM (m·k + k·n + m·n)·groups·element bytes, with
   * the weights of experts that got no rows not read; for MEMORY kernels read + write.
   */
  double bytes = 0;
  /** @brief Shape, for GEMM and GROUPED_GEMM kernels. */
  GemmShape gemm;
  /** @brief ROUTER_TOPK kernels: the selection. */
  RouteShape route;
  /** @brief ATTENTION kernels: query length of each sequence. */
  std::int64_t attn_seq = 0;
  /** @brief ATTENTION kernels: keys a sequence holds before its first query (KV cache, earlier chunks). */
  std::int64_t attn_prefix = 0;
  /**
   * @brief ATTENTION kernels: query-key score pairs per sequence and head, the diagonal square counted
   * half (s·prefix + s²/2 for full causal attention; a window cuts it). 0: full causal from attn_seq and
   * attn_prefix.
   */
  double attn_score_pairs = 0;
  /** @brief ATTENTION kernels under a window: keys a query row holds on average (pairs / seq). 0: no window.
   */
  double attn_row_keys = 0;
  /** @brief ATTENTION kernels: query/key head width. */
  std::int64_t attn_head_dim = 0;
  /** @brief ATTENTION kernels: sequences x query heads of the call (its parallel work items). */
  std::int64_t attn_batch_heads = 0;
};

/** @brief Lower-case name ("gemm", "grouped_gemm", "attention", "memory", "router_topk"). */
std::string to_string(KernelClass kind);

}  // namespace moesim::models
