#pragma once
/**
 * @file Table interpolation in log space, the rule every profile table follows.
 *
 * Sizes (bytes, rows, sequence length) span several decades and hardware curves are close to
 * straight lines against log(size), so the axis is log2(x) and the value is interpolated
 * linearly. Outside the table the edge value is returned (clamping): a profile never
 * extrapolates beyond what was measured.
 */
#include <vector>

namespace moesim::hw {

/**
 * @brief Value at `x` of the curve (xs, values), linear in log2(x), clamped at both ends.
 * @pre xs is non-empty, strictly increasing and positive; values.size() == xs.size().
 * A non-positive `x` returns the first value.
 */
double interpolate_log_x(const std::vector<double>& xs, const std::vector<double>& values, double x);

/**
 * @brief Bilinear interpolation in (log2 x, log2 y) over a grid, clamped on every edge.
 * @param grid grid[i][j] is the value at (xs[i], ys[j]).
 * @pre both axes non-empty, strictly increasing, positive; grid is xs.size() × ys.size().
 */
double interpolate_bilinear_log(const std::vector<double>& xs, const std::vector<double>& ys,
                                const std::vector<std::vector<double>>& grid, double x, double y);

}  // namespace moesim::hw
