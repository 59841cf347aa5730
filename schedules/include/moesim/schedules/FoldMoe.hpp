#pragma once
/**
 * @file The FoldMoE schedule family (FoldMoE paper, shared/seeds/004): names, and the overlap degrees
 * `--degree auto` tries.
 *
 *   megatron      no overlap: attention, Dispatch, experts, Combine, one after the other (d = 1)
 *   tutel         MoE-only token pipeline: the MoE layer's d chunks overlap Dispatch/experts/Combine
 *   aaam          attention-MoE pipeline, all attention slices first, then all MoE micro-batches
 *   1a1m          attention-MoE pipeline, one attention slice then one MoE micro-batch (§4.1)
 *   1a1m-uniform  1a1m with Algorithm 1's time-uniform attention slices and a token buffer (§4.2)
 */
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

/** @brief True for megatron, tutel, aaam, 1a1m and 1a1m-uniform. */
bool is_foldmoe_schedule(const std::string& schedule);

/** @brief True for the foldmoe schedules whose overlap degree d is a parameter (all but megatron). */
bool has_overlap_degree(const std::string& schedule);

/**
 * @brief Degrees `--degree auto` simulates: every d in [2, 16] that splits each sequence's share of a
 * rank evenly (seq_len divisible by tp·d), so every MoE micro-batch has the same size; this holds for
 * 2, 4, 8 and 16 (the paper's search) whenever seq_len is a multiple of 16·tp. Empty when none does.
 */
std::vector<int> candidate_degrees(const Scenario& s);

}  // namespace moesim::schedules
