#pragma once
/**
 * @file Status checks for GPU APIs. Each macro throws GpuError with "file:line: call failed:
 * <API error string> (<error name>)"; bench_main() prints it and exits with code 1.
 *
 *   CUDA_CHECK(cudaMalloc(&p, bytes));   CUDA_CHECK_LAUNCH();  // after a <<<>>> launch
 *   NCCL_CHECK(ncclAllReduce(...));      CUBLAS_CHECK(cublasLtMatmul(...));
 */
#include <stdexcept>
#include <string>

#include "gpu_runtime.hpp"

namespace moesim::kernels {

/** @brief A failed GPU API call; the message carries file, line, call and the API's error text. */
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_gpu_error(const char* file, int line, const char* call,
                                         const std::string& what) {
  throw GpuError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + what);
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw_gpu_error(file, line, call,
                    std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")");
  }
}

#if defined(MOESIM_HAVE_CCL)
/** @brief "2.28.9" from ncclGetVersion (codes since NCCL 2.9: major·10000 + minor·100 + patch). */
inline std::string nccl_version_text() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "unknown";
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

inline void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess && status != ncclInProgress) {
    throw_gpu_error(file, line, call,
                    std::string(ncclGetErrorString(status)) + " (ncclResult " +
                        std::to_string(static_cast<int>(status)) + ")");
  }
}
#endif

#if defined(MOESIM_HAVE_BLASLT)
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw_gpu_error(file, line, call,
                    std::string(cublasLtGetStatusString(status)) + " (status " +
                        std::to_string(static_cast<int>(status)) + ")");
  }
}
#endif

}  // namespace moesim::kernels

#define CUDA_CHECK(call) ::moesim::kernels::check_cuda((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH() \
  ::moesim::kernels::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define NCCL_CHECK(call) ::moesim::kernels::check_nccl((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::moesim::kernels::check_cublas((call), #call, __FILE__, __LINE__)
