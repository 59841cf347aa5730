#pragma once
/**
 * @file A traced op's launch sequence: one representative call out of its layers' calls, and the loop over
 * local experts inside a routed-experts call (its period, its repeats and the odd iterations around them).
 */
#include <cstddef>
#include <optional>
#include <vector>

#include "moesim/traces/OpAttribution.hpp"

namespace moesim::calibrate::detail {

/** @brief Items averaged element by element over `copies` (each as long as the first): host, wait, GPU time.
 */
std::vector<traces::TracedItem> average(const std::vector<std::vector<traces::TracedItem>>& copies);

/** @brief One op's launches in one pass as one call: the layers whose sequence is the most common, averaged.
 */
std::vector<traces::TracedItem> representative(const std::vector<const traces::OpCall*>& calls,
                                               int calls_per_layer);

/**
 * @brief A loop over local experts in a routed-experts call: `period` items repeated `repeats` times from
 * `begin`, and the loop's launches right before (`thinned_before`) and after (`thinned_after`) them: odd
 * iterations (thinned, or mostly the body's launches) and the rest of a last iteration the window cut. The
 * body runs once per local expert in their place.
 */
struct ExpertLoop {
  std::size_t begin = 0, period = 0, repeats = 0, thinned_before = 0, thinned_after = 0;
  std::size_t end() const { return begin + period * repeats; }
};

/** @brief The loop over `experts` local experts among `items`, if they hold one. */
std::optional<ExpertLoop> find_expert_loop(const std::vector<traces::TracedItem>& items, std::size_t experts);

}  // namespace moesim::calibrate::detail
