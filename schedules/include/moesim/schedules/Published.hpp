#pragma once
/** @file Published results the shipped schedules can be checked against (`moesim validate --published`). */
#include <string>
#include <vector>

namespace moesim::schedules {

/** @brief One published figure next to moesim's prediction for the same setting. */
struct ValidationRow {
  std::string source;    ///< paper and table/figure, e.g. "FarSkip Table 3"
  std::string scenario;  ///< the setting in words
  std::string metric;    ///< e.g. "overlap_pct", "speedup"
  double published = 0;
  double predicted = 0;
  double error_pct() const { return published != 0 ? 100.0 * (predicted - published) / published : 0.0; }
};

/**
 * @brief Simulates every published setting the shipped schedules cover, with the shipped profiles:
 * FarSkip paper Table 3 (DS-V2-Lite and DS-V3 L=6 on 8×MI325X, EP8), Figure 5 (EP=32 on 4 nodes) and
 * §5.2's prefill TTFT speedups and all-reduce overlap (8×MI300X, TP=EP=8, fp8); FoldMoE paper Table 2
 * (GPT-MoE-M on 2×8 A10G, TP 8, EP 16): FoldMoE's speedup over Megatron-MoE and over Tutel, best d each.
 */
std::vector<ValidationRow> published_validation();

}  // namespace moesim::schedules
