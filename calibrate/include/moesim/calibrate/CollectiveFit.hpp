#pragma once
/**
 * @file Collective tables from measured (size, time) points, in the engine's model
 * (hwprofiles/FORMAT.md, nccl-tests conventions with the latency taken out):
 *
 *   time(size) = steps · step_latency + bus_bytes(size) / busbw(size)
 *   steps      = 2(n−1) all-reduce, n−1 all-gather / reduce-scatter, 1 all-to-all
 *
 *   time ^
 *        |                                   ..*   transfer region: busbw = bus_bytes / (t − α)
 *        |                              ..*``
 *      α +-*--*--*--*--*--*--*--*..*``          latency region (size ≤ 64 KiB): α = median t
 *        +-------------------------------------> log size
 */
#include <vector>

#include "moesim/hwprofiles/ProfileEnums.hpp"

namespace moesim::calibrate {

/** @brief One measured collective size: nccl-tests size (bytes) and time (seconds). */
struct SizeTime {
  double bytes = 0;
  double time_s = 0;
};

/** @brief Knobs of fit_collective(), with the values `moesim calibrate` uses. */
struct CollectiveFitOptions {
  double latency_max_bytes = 65536;  ///< sizes at or below this form the latency region
  double min_transfer_share = 0.1;   ///< a table point needs (t − α) ≥ this · t
};

/** @brief The fitted table and how it was obtained. */
struct CollectiveFit {
  double step_latency_s = 0;
  std::vector<double> bytes;      ///< table sizes, strictly increasing
  std::vector<double> busbw_Bps;  ///< latency-free bus bandwidth at each size
  int latency_points = 0;         ///< measured sizes in the latency region (0: latency from the fallback)
  int dropped_points = 0;         ///< transfer-region sizes whose transfer share was below the threshold
};

/**
 * @brief Fits one table. α = median time of the sizes ≤ latency_max_bytes (or steps ·
 * fallback_step_latency_s when there are none); step_latency = α / steps. Every larger size whose
 * transfer time t − α is at least min_transfer_share · t becomes a table point with
 * busbw = bus_bytes(size) / (t − α). Points at the same size are merged by their median time.
 * The table is empty when no size qualifies (the caller keeps the base table then).
 */
CollectiveFit fit_collective(hw::CollectiveKind kind, int gpus, std::vector<SizeTime> points,
                             double fallback_step_latency_s, const CollectiveFitOptions& options = {});

}  // namespace moesim::calibrate
