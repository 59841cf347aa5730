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

/** @brief All-to-all MoE runs EP without attention TP; all-reduce MoE runs TP attention on the EP ranks. */
void validate_layer_stack(const Scenario& s);

/** @brief The stack of s's layers, every layer regular, or FarSkip-converted as s.options say. */
BuiltProgram build_layer_stack(const Scenario& s, bool farskip);

}  // namespace moesim::schedules::detail
