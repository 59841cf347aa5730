#pragma once
/**
 * @file Message-size sweeps and byte-count text, as nccl-tests' -b/-e/-f/-i options.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::kernels {

/** @brief The shortest exact text for a byte count: 1073741824 -> "1G", 1536 -> "1536". */
std::string format_bytes(std::uint64_t bytes);

/**
 * @brief min, min*factor, ... up to and including max (never past it); factor must be > 1.
 * With factor <= 1 or min > max, throws std::invalid_argument.
 */
std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor);

/** @brief min, min+step, ... up to and including max; step must be > 0. */
std::vector<std::uint64_t> linear_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t step);

/** @brief Rounds value down to a multiple of `multiple` (> 0). */
std::uint64_t align_down(std::uint64_t value, std::uint64_t multiple);

}  // namespace moesim::kernels
