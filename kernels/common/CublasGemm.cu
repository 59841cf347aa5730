#include "CublasGemm.hpp"

#if !defined(MOESIM_USE_HIP)
namespace moesim::kernels {

CublasGemm::CublasGemm(const MatmulShape& shape, cudaStream_t stream, const DeviceBuffer& workspace)
    : shape_(shape) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
  CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace.get(), workspace.bytes()));
}

CublasGemm::~CublasGemm() {
  (void)cublasDestroy(handle_);
}

cublasStatus_t CublasGemm::run(const void* x, const void* w, void* y) const {
  const float alpha = shape_.alpha, beta = 0.0f;
  const auto m = static_cast<int>(shape_.m), n = static_cast<int>(shape_.n), k = static_cast<int>(shape_.k);
  return cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w, CUDA_R_16BF, k, x, CUDA_R_16BF,
                      k, &beta, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace moesim::kernels
#endif
