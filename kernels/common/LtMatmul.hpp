#pragma once
/**
 * @file One cuBLASLt (hipBLASLt) matrix product in row-major terms, plus sampled verification.
 *
 *   Y[m, n] = alpha * A · B      (batched: `batch` independent products with fixed strides)
 *
 * A is stored row-major as [m, k] (A_MK) or as its transpose [k, m] (A_KM); B as [n, k] (B_NK, the
 * weight layout of Y = X·Wᵀ, cuBLAS "TN", the layout fp8 requires) or [k, n] (B_KN). Y is row-major
 * [m, n] in `out_type`. Internally cuBLASLt sees the column-major product Yᵀ = Bᵀ·Aᵀ.
 * Accumulation is fp32; the algorithm is cuBLASLt's first heuristic choice for a 32 MiB workspace.
 */
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "DeviceBuffer.hpp"
#include "DeviceFill.hpp"
#include "GpuCheck.hpp"
#include "moesim/kernels/ErrorTally.hpp"

namespace moesim::kernels {

enum class ALayout { MK, KM };
enum class BLayout { NK, KN };

/** @brief Shape, layouts and types of one (batched) product. */
struct MatmulShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  ALayout a_layout = ALayout::MK;
  BLayout b_layout = BLayout::NK;
  DataType in_type = DataType::BF16;
  DataType out_type = DataType::BF16;
  float alpha = 1.0f;

  std::int64_t a_elements() const { return m * k; }
  std::int64_t b_elements() const { return n * k; }
  std::int64_t y_elements() const { return m * n; }
  /** @brief 2·m·n·k·batch. */
  double flops() const { return 2.0 * static_cast<double>(m) * n * k * batch; }
  /** @brief Each operand read once and the output written once. */
  double min_bytes() const;
};

/** @brief "cuBLASLt 13.1.0"-style version text of the linked library. */
std::string blaslt_version();

/** @brief One cuBLASLt handle shared by the products of a benchmark. */
class LtHandle {
 public:
  LtHandle();
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

/** @brief Descriptors and chosen algorithm of one product; run() enqueues it. */
class LtMatmul {
 public:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;

  /** @throws CaseSkipped when cuBLASLt offers no algorithm for this shape and types. */
  LtMatmul(const LtHandle& handle, const MatmulShape& shape);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /** @brief How many algorithms cuBLASLt's heuristic is asked for (autotune() times them all). */
  static constexpr int kCandidates = 24;
  /** @brief Of kCandidates, how many come from a second heuristic query with a 1 MiB workspace limit. */
  static constexpr int kSmallWorkspaceCandidates = 8;
  static constexpr std::uint64_t kSmallWorkspaceBytes = 1u << 20;

  const MatmulShape& shape() const { return shape_; }
  /** @brief Enqueues Y = alpha·A·B; the workspace must hold kWorkspaceBytes. */
  void run(const void* a, const void* b, void* y, void* workspace, cudaStream_t stream) const;
  /**
   * @brief Times the first `candidates` algorithms of cuBLASLt's heuristic on these operands (`reps`
   * back-to-back runs each, event-timed after one warm-up) and keeps the fastest, so that the
   * benchmark reports the best cuBLASLt rate for the shape rather than the heuristic's first guess.
   * Overwrites Y. Returns the index kept (0 = the heuristic's first choice).
   */
  int autotune(const void* a, const void* b, void* y, void* workspace, cudaStream_t stream, int candidates,
               int reps = 3);
  /** @brief Algorithms the heuristic returned (at most kCandidates). */
  int candidate_count() const { return candidate_count_; }
  /**
   * @brief The algorithm in use, as "waves=W" plus, on CUDA, "id=… tile=… stages=… splitk=… swizzle=…
   * cluster=…" (cuBLASLt's enum values): what explains a product's sensitivity to SMs taken by other kernels.
   */
  std::string algo_text() const;

 private:
  /** @brief Appends up to `count` heuristic results for a workspace limit that are not candidates yet. */
  cublasStatus_t add_candidates(std::uint64_t workspace, int count);

  const LtHandle& handle_;
  MatmulShape shape_;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t a_desc_ = nullptr;
  cublasLtMatrixLayout_t b_desc_ = nullptr;
  cublasLtMatrixLayout_t y_desc_ = nullptr;
  // A plain array: nvcc 13's front end fails on std::vector of this type (internal error in lexical.c).
  cublasLtMatmulHeuristicResult_t candidates_[kCandidates]{};
  int candidate_count_ = 0;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

/**
 * @brief Mean milliseconds of one call of `launch` over `runs` back-to-back calls on `stream`, event-timed
 * (warm up first); negative when a call reported failure.
 */
float mean_call_ms(cudaStream_t stream, int runs, const std::function<bool()>& launch);

/**
 * @brief Back-to-back calls that fill about 1 ms for a call of `each_ms` (at least `min_runs`, at most 200),
 * so that launch gaps and event resolution do not decide between products a few microseconds apart.
 */
int runs_for_one_ms(float each_ms, int min_runs);

/**
 * @brief Recomputes `samples` random outputs of Y in double precision on the GPU and compares.
 * Error of an output: |y - ref| / sum_k |a_ik·b_kj| (see ErrorTally); batch b of A, B and Y start
 * at b·(elements per matrix).
 */
ErrorTally verify_matmul_samples(const MatmulShape& shape, const void* a, const void* b, const void* y,
                                 int samples, std::uint64_t seed, double tolerance, cudaStream_t stream);

}  // namespace moesim::kernels
