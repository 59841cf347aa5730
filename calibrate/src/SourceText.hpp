#pragma once
/** @file Number formatting shared by the source texts that `moesim calibrate` writes into profiles. */
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace moesim::calibrate {

/** @brief `value` with `digits` significant digits (%g). */
inline std::string num(double value, int digits = 3) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  return buffer;
}

/** @brief "lo-hi" of the values as num() prints them, one number when both print alike, "-" for none. */
inline std::string range_text(const std::vector<double>& values, int digits = 3) {
  if (values.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const std::string low = num(*lo, digits), high = num(*hi, digits);
  return low == high ? low : low + "-" + high;
}

/** @brief What a merged curve kept of its base beyond the measured `range` ("that range", "the measured
 * bytes"): "the N base point(s) outside RANGE keep(s) the base curve's shape scaled to the measured edge
 * (xLOW below, xHIGH above)". */
inline std::string inherited_points_text(int points, const std::string& range, double scale_low,
                                         double scale_high) {
  const bool one = points == 1;
  return "the " + std::to_string(points) + (one ? " base point" : " base points") + " outside " + range +
         (one ? " keeps" : " keep") + " the base curve's shape scaled to the measured edge (x" +
         num(scale_low, 3) + " below, x" + num(scale_high, 3) + " above)";
}

}  // namespace moesim::calibrate
