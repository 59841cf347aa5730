#pragma once
/**
 * @file Figures of the FlashMoE paper (shared/seeds/003) that do not need a simulation; its schedules
 * (the megakernel and the multi-kernel baselines) register in schedules/src/flashmoe/.
 */
#include <cstdint>
#include <string>
#include <vector>

#include "moesim/schedules/Scenario.hpp"

namespace moesim::schedules {

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
