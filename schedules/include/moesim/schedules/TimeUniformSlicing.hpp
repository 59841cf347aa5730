#pragma once
/**
 * @file FoldMoE's quick-start time-uniform attention slicing (FoldMoE paper §4.2, Algorithm 1): a pure
 * function of the sequence length, the overlap degree and two model sizes.
 *
 * The attention layer of a FoldMoE block runs over a sequence in slices l_1..l_n; a token buffer
 * regroups their outputs into d fixed-size MoE micro-batches of L/d tokens. A slice may start only when
 * the previous one is done (causal keys/values), and MoE micro-batch j may start only when
 * Σ_{i≤j} l_i ≥ j·L/d tokens have left attention:
 *
 *   attention   |--l_1--|----l_2----|---l_3---|--l_4--|-l_5-|      (later slices see more keys: shorter)
 *   token buffer  |  L/d  |  L/d  |  L/d  |  L/d  |  L/d  |      (uniform MoE micro-batches)
 */
#include <cstdint>
#include <vector>

namespace moesim::schedules {

/**
 * @brief Eq. (5): FLOPs of an l-token slice attending to a c-token context (the slice included),
 * FLOPs(l, c) = (4H + 3h)·l·c + 8H²·l, with H the model width (d_model) and h the attention heads.
 */
double attention_slice_flops(std::int64_t l, std::int64_t c, std::int64_t hidden, std::int64_t heads);

/** @brief The ideal per-slice work t̂ = Σ_{i=1..L} FLOPs(1, i) / d, in closed form. */
double ideal_slice_flops(std::int64_t seq_len, int degree, std::int64_t hidden, std::int64_t heads);

/**
 * @brief Algorithm 1, quick-start time-uniform slicing, in O(L):
 *
 *   m ← ⌈L/d⌉; S ← [m]; start ← m
 *   while start < L:
 *     end ← min(L, max(start + 1, (|S| + 1)·m))          (the token buffer's lower bound)
 *     if L − end ≥ d − |S|:
 *       end ← argmin_{end ≤ i ≤ L} |FLOPs(i − start, i) − t̂|   (first minimum on ties)
 *     S.append(end − start); start ← end
 *
 * The min(L, ·) is the only addition to the paper's listing: when d does not divide L the lower bound
 * (|S|+1)·m can pass L, and the slices must still sum to L. FLOPs(i − start, i) grows with i, so
 * |FLOPs − t̂| falls then rises and the argmin scan stops at the first i whose FLOPs reach t̂; each
 * slice is scanned once, which keeps the whole loop O(L).
 *
 * Guarantees: Σ l_i = L; l_1 = ⌈L/d⌉; Σ_{i≤j} l_i ≥ min(L, j·⌈L/d⌉) ≥ j·L/d; at most d slices (fewer
 * only when a slice's argmin reaches L early).
 * @throws ScheduleError unless seq_len >= 1, 1 <= degree <= seq_len, hidden >= 1 and heads >= 1.
 */
std::vector<std::int64_t> time_uniform_slices(std::int64_t seq_len, int degree, std::int64_t hidden,
                                              std::int64_t heads);

}  // namespace moesim::schedules
