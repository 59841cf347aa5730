#pragma once
/** @file What a whole step adds to a result: throughput per GPU, the pipeline bubble, and which communication
 * stayed exposed. */
#include <optional>

#include "moesim/schedules/Registry.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace moesim::schedules::detail {

/**
 * @brief The "step" figure group of a finished step (is_step): tokens/s and TFLOP/s per GPU, the bubble
 * (share of the step a rank neither computes nor communicates), and per kind of communication (EP all-to-all,
 * TP, pipeline point-to-point, data-parallel) its busy and exposed time, mean over the simulated ranks, and
 * the optimizer step. nullopt for a layer stack.
 */
std::optional<FigureGroup> step_figures(const SimulationResult& r, const BuiltProgram& built);

}  // namespace moesim::schedules::detail
