#pragma once
/**
 * @file What the regular and FarSkip schedules share: a stack of MoE transformer layers built layer by
 * layer (Layers.hpp), and their common options and rules.
 */
#include <vector>

#include "moesim/schedules/Registry.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace moesim::schedules::detail {

/** @brief sync_splits, shared_overlap and transport: the options both schedules take. */
std::vector<ScheduleOption> layer_stack_options();

/**
 * @brief All-reduce MoE runs TP attention on the EP ranks (inference); all-to-all MoE runs EP with attention
 * TP and sequence parallelism inside the EP group (regular layers only: FarSkip's rewiring is modeled without
 * TP).
 */
void validate_layer_stack(const Scenario& s, bool farskip);

/** @brief The scenario whose tokens the MoE routes per rank (1/tp of a TP group's under sequence
 * parallelism). */
Scenario routed_scenario(const Scenario& s);

/** @brief The stack of s's layers, every layer regular, or FarSkip-converted as s.options say. */
BuiltProgram build_layer_stack(const Scenario& s, bool farskip);

/** @brief The same layers as chunks of a pipeline step (StepBuilder.hpp). */
std::shared_ptr<const ChunkEmitter> layer_stack_chunks(const Scenario& s, bool farskip);

}  // namespace moesim::schedules::detail
