#include <stdexcept>

#include "DeviceFill.hpp"
#include "GpuCheck.hpp"

namespace moesim::kernels {
namespace {

template <typename T>
__device__ T from_float(float value);
template <>
__device__ float from_float<float>(float value) {
  return value;
}
template <>
__device__ bf16_t from_float<bf16_t>(float value) {
  return float_to_bf16(value);
}
#if defined(MOESIM_HAVE_FP8)
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float value) {
  return __nv_fp8_e4m3(value);
}
#endif

template <typename T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = from_float<T>(random_value(seed, i, scale));
  }
}

template <typename T>
__global__ void fill_constant_kernel(T* data, std::size_t count, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = from_float<T>(value);
  }
}

unsigned fill_blocks(std::size_t count) {
  const std::size_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

std::size_t element_size(DataType type) {
  switch (type) {
    case DataType::FP32:
      return 4;
    case DataType::BF16:
      return 2;
    case DataType::FP8_E4M3:
      return 1;
  }
  return 0;
}

std::string data_type_name(DataType type) {
  switch (type) {
    case DataType::FP32:
      return "fp32";
    case DataType::BF16:
      return "bf16";
    case DataType::FP8_E4M3:
      return "fp8e4m3";
  }
  return "?";
}

void fill_random(void* data, DataType type, std::size_t count, std::uint64_t seed, float scale,
                 cudaStream_t stream) {
  const unsigned blocks = fill_blocks(count);
  switch (type) {
    case DataType::FP32:
      fill_random_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(data), count, seed, scale);
      break;
    case DataType::BF16:
      fill_random_kernel<<<blocks, 256, 0, stream>>>(static_cast<bf16_t*>(data), count, seed, scale);
      break;
    case DataType::FP8_E4M3:
#if defined(MOESIM_HAVE_FP8)
      fill_random_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed, scale);
      break;
#else
      throw std::runtime_error("fp8 buffers are not supported by this build");
#endif
  }
  CUDA_CHECK_LAUNCH();
}

void fill_constant(void* data, DataType type, std::size_t count, float value, cudaStream_t stream) {
  const unsigned blocks = fill_blocks(count);
  switch (type) {
    case DataType::FP32:
      fill_constant_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(data), count, value);
      break;
    case DataType::BF16:
      fill_constant_kernel<<<blocks, 256, 0, stream>>>(static_cast<bf16_t*>(data), count, value);
      break;
    case DataType::FP8_E4M3:
#if defined(MOESIM_HAVE_FP8)
      fill_constant_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, value);
      break;
#else
      throw std::runtime_error("fp8 buffers are not supported by this build");
#endif
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace moesim::kernels
