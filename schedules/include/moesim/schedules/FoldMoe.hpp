#pragma once
/**
 * @file The overlap degrees `--degree auto` tries for the FoldMoE family's token pipelines (its schedules
 * register in schedules/src/foldmoe/FoldMoeSchedules.cpp).
 */
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

/**
 * @brief Degrees `--degree auto` simulates: every d in [2, 16] that splits each sequence's share of a
 * rank evenly (seq_len divisible by tp·d), so every MoE micro-batch has the same size; this holds for
 * 2, 4, 8 and 16 (the paper's search) whenever seq_len is a multiple of 16·tp. Empty when none does.
 */
std::vector<int> candidate_degrees(const Scenario& s);

}  // namespace moesim::schedules
