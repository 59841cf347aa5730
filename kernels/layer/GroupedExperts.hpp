#pragma once
/**
 * @file A rank's routed experts as grouped GEMMs: one cuBLAS grouped-batched launch computes every local
 * expert's up projection, one SwiGLU covers all rows, one grouped launch computes every down projection
 * (what grouped-GEMM MoE implementations do, instead of three launches per expert).
 *
 * Rows per expert are fixed for a configuration (the routing is planned before timing), so the per-expert
 * operand pointers of every layer are built and uploaded once. Experts without rows are left out.
 * Needs common/GroupedGemm (CUDA); on ROCm the runner's experts run as a loop.
 */
#include <cstdint>
#include <memory>

#include "GroupedGemm.hpp"
#include "RankState.hpp"

namespace moesim::kernels::layer {

class GroupedExperts {
 public:
  /** @brief Builds the operand tables of every layer from `state`'s rows and weights. */
  explicit GroupedExperts(RankState& state);
  ~GroupedExperts();
  GroupedExperts(const GroupedExperts&) = delete;
  GroupedExperts& operator=(const GroupedExperts&) = delete;

  /** @brief expert_in (rows grouped by expert) → expert_out, on the compute stream. */
  void run(int layer);

 private:
  RankState& state_;
  std::int64_t total_rows_ = 0;
#if !defined(MOESIM_USE_HIP)
  /** @brief One projection over every expert with rows: its launch and its tables, layer after layer. */
  struct Projection {
    explicit Projection(cudaStream_t stream) : gemm(stream) {}
    GroupedGemm gemm;
    DeviceBuffer tables;
  };
  std::unique_ptr<Projection> up_, down_;
#endif
};

}  // namespace moesim::kernels::layer
