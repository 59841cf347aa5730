#pragma once
/** @file A whole step: pipeline stages running a layer schedule's chunks in a pipeline schedule's order. */
#include <memory>
#include <vector>

#include "layers/Layers.hpp"
#include "moesim/schedules/Registry.hpp"

namespace moesim::schedules::detail {

/**
 * @brief The program of one step of `s` (is_step, or a schedule that builds through chunks): every pipeline
 * stage's representative rank runs its chunks of every micro-batch in `s.pp_schedule`'s order; activations
 * and gradients cross stages as point-to-point transfers; with an optimizer, the data-parallel collectives
 * and the optimizer step follow (DataParallel.hpp). One representative per stage stands for its EP group when
 * routing is balanced, and replica 0 for every data-parallel replica.
 */
BuiltProgram build_step(const Scenario& s, const std::shared_ptr<const ChunkEmitter>& chunks);

/**
 * @brief Tokens one rank completes per micro-batch: its tokens, or in decode one per sequence plus, with MTP,
 * the drafted one when it is accepted (the rank computes 2 a sequence, 1 + mtp_accept of them count).
 */
double completed_tokens_per_rank(const Scenario& s);

/** @brief Layers [0, layers) in `parts` contiguous ranges, sizes differing by at most one (larger ones last).
 */
std::vector<LayerRange> split_layers(int layers, int parts);

}  // namespace moesim::schedules::detail
