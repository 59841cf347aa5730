#pragma once
/**
 * @file The FlashMoE family (shared/seeds/003): the `megakernel` schedule, the multi-kernel baselines
 * the paper measured it against, and the figures the paper reports for them.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

/** @brief True for megakernel and its baselines (comet, megatron-*, deepspeed-moe, fastermoe). */
bool is_flashmoe_schedule(const std::string& schedule);

/** @brief The FlashMoE baselines, in Table 1 order, then fastermoe. */
const std::vector<std::string>& flashmoe_baselines();

/**
 * @brief GPU operations one rank launches per MoE layer forward: fixed + per_expert · local_experts.
 * At 32 local experts (Table 1's 2 A100s x 32 experts) this is FlashMoE Table 1: comet 33,
 * megatron-cutlass 85, megatron-te 261, megatron-deepep 432, deepspeed-moe 550; megakernel 1. The split
 * into fixed and per-expert parts, and fastermoe's count, are estimates (see FlashBaselines.cpp).
 * @throws ConfigError for a schedule outside the family.
 */
int flashmoe_kernel_count(const std::string& schedule, int local_experts);

/**
 * @brief Bytes of FlashMoE's symmetric tensor L (§3.2, §3.2.1): 4 · E · C' · H · element, with
 * C' = ceil(S/E) rounded up to a multiple of tile_m (in-place padding), i.e. 4·Size(T) when S/E >= bM
 * and 4·(bM·E/S)·Size(T) otherwise; Size(T) = S·H·element.
 */
double symmetric_tensor_bytes(std::int64_t tokens, int experts, std::int64_t hidden, int element_bytes,
                              int tile_m);

/** @brief Straggler presets from FlashMoE Table 2 (median and p95 of total/actual all-to-all time). */
struct StragglerPreset {
  std::string name;
  double median_ratio;
  double p95_ratio;
  std::string source;
};
/** @brief `table2-vm` (1x8 V100 VM: 3.1x, 11.4x) and `table2-hpc` (8x4 A100: 1.09x, 1.32x). */
const std::vector<StragglerPreset>& straggler_presets();

}  // namespace moesim::schedules
