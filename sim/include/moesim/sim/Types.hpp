#pragma once
/** @file Basic engine types. Simulated time is integer nanoseconds; rates are per nanosecond. */
#include <cstdint>
#include <string>

namespace moesim::sim {

/** @brief Simulated time in integer nanoseconds. */
using TimeNs = std::int64_t;
/** @brief Index of an op in its Program. */
using OpId = std::int32_t;
/** @brief Marks "no op" where an OpId is optional. */
inline constexpr OpId NO_OP = -1;

/** @brief The collectives the engine decomposes into flows. */
enum class CollectiveKind { ALL_TO_ALL, ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER };

/** @brief How a collective moves data: SM-driven kernels (NCCL/RCCL) or copy engines (no SMs taken). */
enum class Transport { SM_KERNEL, COPY_ENGINE };

/**
 * @brief Which simulator moves a run's data. Both share the op lifecycle and the SM/HBM contention of
 * kernels; they differ in the network: ANALYTIC solves max-min shares over this Platform's links itself,
 * SIMGRID hands every flow to SimGrid's network model as a comm over a SimGrid platform built from the
 * same links (docs/simgrid-engine.md).
 */
enum class Backend { ANALYTIC, SIMGRID };

/** @brief Lower-case name of a collective kind ("all_to_all", ...). */
std::string to_string(CollectiveKind kind);

}  // namespace moesim::sim
