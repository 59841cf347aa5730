#pragma once
/**
 * @file A rank's routed experts as grouped GEMMs: one cuBLAS grouped-batched launch computes every local
 * expert's up projection, one SwiGLU covers all rows, one grouped launch computes every down projection
 * (what grouped-GEMM MoE implementations do, instead of three launches per expert).
 *
 * Rows per expert are fixed for a configuration (the routing is planned before timing), so the per-expert
 * operand pointers of every layer are built and uploaded once. Experts without rows are left out.
 * cuBLAS's grouped batched GEMM needs CUDA 12.5; on ROCm the runner's experts run as a loop.
 */
#include <cstdint>
#include <vector>

#include "RankState.hpp"

#if !defined(MOESIM_USE_HIP)
#include <cublas_v2.h>
#endif

namespace moesim::kernels::layer {

/** @brief True when this build can run `--experts grouped`. */
bool grouped_experts_available();

class GroupedExperts {
 public:
  /** @brief Builds the operand tables of every layer from `state`'s rows and weights (device current). */
  explicit GroupedExperts(RankState& state);
  ~GroupedExperts();
  GroupedExperts(const GroupedExperts&) = delete;
  GroupedExperts& operator=(const GroupedExperts&) = delete;

  /** @brief expert_in (rows grouped by expert) → expert_out, on the compute stream. */
  void run(int layer);

 private:
  /** @brief Y_e = X_e · W_eᵀ for every expert e with rows (X_e [rows_e, K], W_e [N, K], row-major). */
  struct Projection {
    std::vector<int> out_width, depth;  // N and K per group (cuBLAS column-major: m = N, k = K)
    DeviceBuffer pointers;              // per layer: W[g], X[g], Y[g]
  };
  void launch(const Projection& projection, int layer);

  RankState& state_;
  int groups_ = 0;
  std::int64_t total_rows_ = 0;
  std::vector<int> rows_, group_size_;
  std::vector<float> alpha_, beta_;
  Projection up_, down_;
#if !defined(MOESIM_USE_HIP)
  std::vector<cublasOperation_t> transpose_, keep_;
  cublasHandle_t handle_ = nullptr;
#endif
};

}  // namespace moesim::kernels::layer
