#pragma once
/**
 * @file A hardware profile as the engine sees it: the machine of `nodes` nodes (GPUs, fabric, NICs,
 * collective tables, contention) and the board power model.
 */
#include <optional>

#include "moesim/hwprofiles/Cluster.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/sim/Platform.hpp"
#include "moesim/sim/Power.hpp"

namespace moesim::cost {

/** @brief The profile's board power model; nullopt when the profile has no power section. */
std::optional<sim::PowerModel> power_model(const hw::HwProfile& hw);

/**
 * @brief The engine's machine: `nodes` nodes of the profile's node, its fabric, NICs and collective tables.
 * Without a cluster the nodes' NICs meet at one non-blocking switch. With one, the first `nodes` of its
 * nodes: its NICs (line rate times the profile's achieved/line-rate ratio) and switch fabric; the
 * profile's inter-node collective tables scale by the per-GPU NIC bandwidth the cluster gives over the
 * profile's own (tables are measured with the profile's NICs).
 */
sim::Platform make_platform(const hw::HwProfile& hw, int nodes, const hw::ClusterSpec* cluster = nullptr);

/** @brief Per-GPU scale-out bandwidth of `cluster` over the profile's: the inter-node table scale. */
double inter_node_bandwidth_ratio(const hw::HwProfile& hw, const hw::ClusterSpec& cluster);

}  // namespace moesim::cost
