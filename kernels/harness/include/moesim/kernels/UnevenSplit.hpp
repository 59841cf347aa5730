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

/**
 * @brief An all-to-all with one hot rank, as a MoE layer whose popular experts live on rank 0.
 * Inbound (a Dispatch): every other rank sends hot·chunk to rank 0 and spreads the rest of its
 * ranks·chunk evenly over ranks 1..n-1 (itself included), so rows stay even and rank 0 receives hot
 * times an even share from each peer; rank 0's own row is even. Outbound (a Combine) is its transpose:
 * rank 0 sends hot times an even share to each peer. Needs ranks >= 2
 * and 1 <= hot < ranks; throws std::invalid_argument otherwise.
 */
std::vector<std::uint64_t> hot_rank_counts(int ranks, std::uint64_t chunk, double hot, bool outbound);

}  // namespace moesim::kernels
