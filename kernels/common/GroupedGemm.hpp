#pragma once
/**
 * @file One cuBLAS grouped-batched bf16 launch (`cublasGemmGroupedBatchedEx`, CUDA ≥ 12.5), in row-major
 * terms: problem g computes Y_g[rows_g, n] = X_g[rows_g, k] · W_g[n, k]ᵀ (the weight layout of LtMatmul's
 * B_NK), one group per problem, fp32 accumulation. cuBLAS sees the column-major Y_gᵀ = op_T(W_g)·X_g.
 *
 * The operand pointers live in device memory as one table [W_0.. W_G-1, X_0.. X_G-1, Y_0.. Y_G-1]
 * (upload_pointer_table); the shapes are host arrays that cuBLAS reads at every launch, so a launch is
 * not graph-capturable. Not available on ROCm (hipBLASLt has no such call): grouped_gemm_available().
 */
#include <vector>

#include "DeviceBuffer.hpp"

#if !defined(MOESIM_USE_HIP)
#include <cublas_v2.h>
#endif

namespace moesim::kernels {

/** @brief True when this build has a grouped-batched GEMM (CUDA). */
constexpr bool grouped_gemm_available() {
#if defined(MOESIM_USE_HIP)
  return false;
#else
  return true;
#endif
}

/** @brief A device copy of `pointers` (an operand table as described above). */
DeviceBuffer upload_pointer_table(int device, const std::vector<void*>& pointers);

#if !defined(MOESIM_USE_HIP)
class GroupedGemm {
 public:
  /** @brief A cuBLAS handle on the current device, issuing to `stream`. */
  explicit GroupedGemm(cudaStream_t stream);
  ~GroupedGemm();
  GroupedGemm(const GroupedGemm&) = delete;
  GroupedGemm& operator=(const GroupedGemm&) = delete;

  /** @brief The problems of the following launches: rows[g] rows each, all with the same n and k. */
  void set_shapes(const std::vector<int>& rows, int n, int k);
  int groups() const { return static_cast<int>(rows_.size()); }
  /** @brief One launch over every problem; `table` points at 3·groups() device pointers. */
  void run(void* const* table) const;

 private:
  cublasHandle_t handle_ = nullptr;
  std::vector<int> rows_, n_, k_, one_;
  std::vector<cublasOperation_t> transpose_, keep_;
  std::vector<float> alpha_, beta_;
};
#endif

}  // namespace moesim::kernels
