#pragma once
/** @file Max-min fair rate allocation (progressive filling), shared by links and GPU resources. */
#include <limits>
#include <vector>

namespace moesim::sim::detail {

/** @brief A consumer: the resources it crosses and an optional own rate cap. */
struct Demand {
  std::vector<int> resources;
  double cap = std::numeric_limits<double>::infinity();
};

/**
 * @brief Max-min fair rates: every demand's rate rises together until a resource it crosses is full
 * or its cap is reached, then it is frozen and the rest keep rising. Deterministic: ties resolve in
 * index order. A demand that crosses no resource and has no cap gets +infinity.
 */
std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<Demand>& demands);

/** @brief Single-resource case: share `capacity` among `caps` max-min fairly (water filling). */
std::vector<double> water_fill(double capacity, const std::vector<double>& caps);

/**
 * @brief Weighted water filling: `capacity` shared in proportion to `weights`, no consumer above its
 * cap; what a capped consumer leaves goes to the others by weight. Zero weight gets nothing.
 */
std::vector<double> weighted_water_fill(double capacity, const std::vector<double>& caps,
                                        const std::vector<double>& weights);

}  // namespace moesim::sim::detail
