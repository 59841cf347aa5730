#pragma once
/**
 * @file FarSkip paper Eq. (9), the condition under which a layer's all-to-alls can all hide under its own
 * compute: T_Dispatch + T_Combine <= T_layer − (T_routed + T_gate). It holds or not for any all-to-all
 * MoE layer, whatever its schedule, so every all-to-all result reports it (group "farskip_eq9").
 */
#include <optional>
#include <string>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::schedules::detail {

/**
 * @brief Eq. (9)'s terms for the forward pass on rank 0, each a mean over the MoE layers (T_layer: the
 * layer's compute time as simulated); nullopt for all-reduce MoE or a program with no MoE layer.
 */
std::optional<FigureGroup> farskip_eq9(const SimulationResult& r);

/** @brief The summary line of an Eq. (9) group. */
std::string farskip_eq9_line(const FigureGroup& eq9);

}  // namespace moesim::schedules::detail
