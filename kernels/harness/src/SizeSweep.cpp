#include "moesim/kernels/SizeSweep.hpp"

#include <cmath>
#include <stdexcept>

namespace moesim::kernels {

std::string format_bytes(std::uint64_t bytes) {
  if (bytes != 0) {
    if (bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + "G";
    if (bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + "K";
  }
  return std::to_string(bytes);
}

std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (!(factor > 1.0)) throw std::invalid_argument("size sweep step factor must be > 1");
  if (min_bytes == 0) throw std::invalid_argument("size sweep minimum must be > 0 with a step factor");
  if (min_bytes > max_bytes) throw std::invalid_argument("size sweep minimum is larger than its maximum");
  std::vector<std::uint64_t> sizes;
  for (double size = static_cast<double>(min_bytes); size <= static_cast<double>(max_bytes); size *= factor) {
    const auto rounded = static_cast<std::uint64_t>(std::llround(size));
    if (sizes.empty() || rounded != sizes.back()) sizes.push_back(rounded);
  }
  return sizes;
}

std::vector<std::uint64_t> linear_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                        std::uint64_t step) {
  if (step == 0) throw std::invalid_argument("size sweep step must be > 0");
  if (min_bytes > max_bytes) throw std::invalid_argument("size sweep minimum is larger than its maximum");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes; size <= max_bytes; size += step) {
    sizes.push_back(size);
    if (max_bytes - size < step) break;
  }
  return sizes;
}

std::uint64_t align_down(std::uint64_t value, std::uint64_t multiple) {
  if (multiple == 0) throw std::invalid_argument("align_down to a multiple of 0");
  return value / multiple * multiple;
}

}  // namespace moesim::kernels
