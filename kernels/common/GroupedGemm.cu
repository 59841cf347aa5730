#include "GroupedGemm.hpp"

namespace moesim::kernels {

DeviceBuffer upload_pointer_table(int device, const std::vector<void*>& pointers) {
  DeviceBuffer table(device, pointers.size() * sizeof(void*));
  if (!pointers.empty())
    CUDA_CHECK(cudaMemcpy(table.get(), pointers.data(), table.bytes(), cudaMemcpyHostToDevice));
  return table;
}

#if !defined(MOESIM_USE_HIP)

GroupedGemm::GroupedGemm(cudaStream_t stream) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

GroupedGemm::~GroupedGemm() {
  (void)cublasDestroy(handle_);
}

void GroupedGemm::set_shapes(const std::vector<int>& rows, int n, int k) {
  const std::size_t g = rows.size();
  rows_ = rows;
  n_.assign(g, n);
  k_.assign(g, k);
  one_.assign(g, 1);
  transpose_.assign(g, CUBLAS_OP_T);
  keep_.assign(g, CUBLAS_OP_N);
  alpha_.assign(g, 1.0f);
  beta_.assign(g, 0.0f);
}

void GroupedGemm::run(void* const* table) const {
  const auto g = rows_.size();
  CUBLAS_CHECK(cublasGemmGroupedBatchedEx(handle_, transpose_.data(), keep_.data(), n_.data(), rows_.data(),
                                          k_.data(), alpha_.data(), table, CUDA_R_16BF, k_.data(), table + g,
                                          CUDA_R_16BF, k_.data(), beta_.data(), table + 2 * g, CUDA_R_16BF,
                                          n_.data(), groups(), one_.data(), CUBLAS_COMPUTE_32F));
}

#endif

}  // namespace moesim::kernels
