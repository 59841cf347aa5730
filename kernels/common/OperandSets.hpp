#pragma once
/**
 * @file Rotating input sets, so that repeated iterations read HBM rather than the L2 cache.
 *
 * A benchmark whose inputs are smaller than the L2 would otherwise measure the cache: each
 * iteration reads set (iteration mod sets), with enough sets that together they span at least
 * three times the L2 (METHOD: "rotate among several input sets").
 */
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "DeviceBuffer.hpp"
#include "DeviceFill.hpp"

namespace moesim::kernels {

/** @brief How many rotating copies of `bytes_per_set` span 3x the L2 (at least 1, at most max_sets). */
inline std::size_t rotation_count(std::size_t bytes_per_set, std::size_t l2_bytes,
                                  std::size_t max_sets = 64) {
  if (bytes_per_set == 0) return 1;
  const std::size_t needed = (3 * l2_bytes + bytes_per_set - 1) / bytes_per_set;
  return std::clamp<std::size_t>(needed, 1, max_sets);
}

/** @brief `count` buffers of `elements` random values each, seeds seed, seed+1, ... */
inline std::vector<DeviceBuffer> random_buffers(int device, std::size_t count, std::size_t elements,
                                                DataType type, std::uint64_t seed, float scale,
                                                cudaStream_t stream) {
  std::vector<DeviceBuffer> buffers;
  for (std::size_t i = 0; i < count; ++i) {
    buffers.emplace_back(device, elements * element_size(type));
    fill_random(buffers.back().get(), type, elements, seed + i, scale, stream);
  }
  return buffers;
}

}  // namespace moesim::kernels
