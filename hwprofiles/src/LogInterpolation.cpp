#include "moesim/hwprofiles/LogInterpolation.hpp"

#include <algorithm>
#include <cmath>

#include "moesim/common/Check.hpp"

namespace moesim::hw {
namespace {

/** Segment of a log axis that brackets x: lower index and the weight of the upper point. */
struct Bracket {
  std::size_t lower = 0;
  double upper_weight = 0.0;
};

Bracket bracket_log(const std::vector<double>& axis, double x) {
  MOE_CHECK(!axis.empty()) << "interpolation axis is empty";
  if (!(x > axis.front())) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 1, 0.0};
  // First point strictly greater than x; x lies in [axis[upper-1], axis[upper]).
  auto upper = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  std::size_t lower = upper - 1;
  double span = std::log2(axis[upper]) - std::log2(axis[lower]);
  return {lower, (std::log2(x) - std::log2(axis[lower])) / span};
}

double blend(double low, double high, double upper_weight) {
  return low + (high - low) * upper_weight;
}

}  // namespace

double interpolate_log_x(const std::vector<double>& xs, const std::vector<double>& values, double x) {
  MOE_CHECK(xs.size() == values.size()) << xs.size() << " axis points but " << values.size() << " values";
  Bracket b = bracket_log(xs, x);
  if (b.upper_weight == 0.0) return values[b.lower];
  return blend(values[b.lower], values[b.lower + 1], b.upper_weight);
}

double interpolate_bilinear_log(const std::vector<double>& xs, const std::vector<double>& ys,
                                const std::vector<std::vector<double>>& grid, double x, double y) {
  MOE_CHECK(grid.size() == xs.size()) << grid.size() << " rows for " << xs.size() << " x points";
  Bracket bx = bracket_log(xs, x);
  std::size_t next_row = std::min(bx.lower + 1, xs.size() - 1);
  // Interpolate along y within the two bracketing rows, then along x between them.
  double low_row = interpolate_log_x(ys, grid[bx.lower], y);
  double high_row = interpolate_log_x(ys, grid[next_row], y);
  return blend(low_row, high_row, bx.upper_weight);
}

}  // namespace moesim::hw
