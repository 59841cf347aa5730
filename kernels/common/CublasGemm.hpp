#pragma once
/**
 * @file One bf16 product through cuBLAS's classic API (`cublasGemmEx`, CUBLAS_GEMM_DEFAULT, fp32
 * compute), the call PyTorch's cuBLAS back end makes for torch.matmul: the candidate gemm_bench times
 * beside cuBLASLt's picks. Row-major Y[m, n] = X[m, k] · W[n, k]ᵀ (LtMatmul's A_MK, B_NK), which cuBLAS
 * sees as the column-major Yᵀ = op_T(W) · X. CUDA only (hipBLAS's GemmEx is not wired here).
 */
#include "DeviceBuffer.hpp"
#include "LtMatmul.hpp"

#if !defined(MOESIM_USE_HIP)
#include <cublas_v2.h>

namespace moesim::kernels {

class CublasGemm {
 public:
  /** @brief A handle on the current device issuing to `stream`, with `workspace` as its workspace. */
  CublasGemm(const MatmulShape& shape, cudaStream_t stream, const DeviceBuffer& workspace);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  /** @brief Enqueues the product; cuBLAS's status (not checked: a shape it cannot run is no candidate). */
  cublasStatus_t run(const void* x, const void* w, void* y) const;

 private:
  MatmulShape shape_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace moesim::kernels
#endif
