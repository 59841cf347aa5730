#pragma once
/**
 * @file Element types of benchmark buffers and device-side fills.
 *
 * Random values come from a counter-based hash (splitmix64 of seed and index), so a fill is
 * reproducible from its seed and a host reference can regenerate any element with
 * host_random_value(). Values are uniform in [-scale, scale) before rounding to the type.
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu_runtime.hpp"

namespace moesim::kernels {

/** @brief Element type of a benchmark buffer. */
enum class DataType { FP32, BF16, FP8_E4M3 };

/** @brief Bytes per element. */
std::size_t element_size(DataType type);
/** @brief "fp32", "bf16", "fp8e4m3". */
std::string data_type_name(DataType type);

/** @brief Fills `count` elements with uniform random values in [-scale, scale). */
void fill_random(void* data, DataType type, std::size_t count, std::uint64_t seed, float scale,
                 cudaStream_t stream);
/** @brief Fills `count` elements with one value (NaN poisons outputs before a checked run). */
void fill_constant(void* data, DataType type, std::size_t count, float value, cudaStream_t stream);

/** @brief The value fill_random() draws for element `index` before rounding to the type. */
__host__ __device__ inline float random_value(std::uint64_t seed, std::uint64_t index, float scale) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (2.0f * unit - 1.0f) * scale;
}

/** @brief Reads element `index` of a device-typed buffer as float (device code). */
__device__ inline float load_as_float(const void* data, DataType type, std::size_t index) {
  switch (type) {
    case DataType::FP32:
      return static_cast<const float*>(data)[index];
    case DataType::BF16:
      return bf16_to_float(static_cast<const bf16_t*>(data)[index]);
#if defined(MOESIM_HAVE_FP8)
    case DataType::FP8_E4M3:
      return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(data)[index]);
#endif
    default:
      return 0.0f;
  }
}

}  // namespace moesim::kernels
