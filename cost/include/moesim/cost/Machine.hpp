#pragma once
/**
 * @file A hardware profile as the engine sees it: the machine of `nodes` nodes (GPUs, fabric, NICs,
 * collective tables, contention) and the board power model.
 */
#include <optional>

#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Power.hpp"

namespace moesim::cost {

/** @brief The profile's board power model; nullopt when the profile has no power section. */
std::optional<sim::PowerModel> power_model(const hw::HwProfile& hw);

/** @brief The engine's machine: `nodes` nodes of the profile's node, its fabric, NICs and collective tables.
 */
sim::Platform make_platform(const hw::HwProfile& hw, int nodes);

}  // namespace moesim::cost
