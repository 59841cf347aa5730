#pragma once
/** @file Summary statistics shared by calibration fits and measured-run comparisons. */
#include <vector>

namespace moesim {

/** @brief Median of the values (mean of the middle two for an even count); 0 for none. */
double median(std::vector<double> values);

}  // namespace moesim
