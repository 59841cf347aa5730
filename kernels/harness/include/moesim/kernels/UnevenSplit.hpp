#pragma once
/**
 * @file Per-pair element counts of an uneven all-to-all (a MoE dispatch with imbalanced routing).
 */
#include <cstdint>
#include <vector>

namespace moesim::kernels {

/**
 * @brief counts[s·ranks + r] = elements rank s sends to rank r. Every row sums to ranks·chunk (each
 * rank sends what the even all-to-all would), entries are drawn in proportion to weights in
 * [0.25, 1.75], and every column sums to at most 2·ranks·chunk (what the receive buffers hold): a draw
 * that breaks that is drawn again. Deterministic in seed. Throws std::invalid_argument for ranks < 1.
 */
std::vector<std::uint64_t> uneven_all_to_all_counts(int ranks, std::uint64_t chunk, std::uint64_t seed);

}  // namespace moesim::kernels
