#include "moesim/kernels/ErrorTally.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moesim::kernels {

void ErrorTally::add(double value, double reference, double scale) {
  ++checked_;
  if (!std::isfinite(value) || !std::isfinite(reference)) {
    ++wrong_;
    max_relative_error_ = std::numeric_limits<double>::infinity();
    return;
  }
  const double denominator = scale > 0 ? scale : std::max(std::fabs(reference), 1e-30);
  const double error = std::fabs(value - reference) / denominator;
  if (error > tolerance_) ++wrong_;
  max_relative_error_ = std::max(max_relative_error_, error);
}

void ErrorTally::merge(const ErrorTally& other) {
  add_counts(other.checked_, other.wrong_, other.max_relative_error_);
}

void ErrorTally::add_counts(std::int64_t checked, std::int64_t wrong, double max_relative_error) {
  checked_ += checked;
  wrong_ += wrong;
  if (std::isnan(max_relative_error)) max_relative_error = std::numeric_limits<double>::infinity();
  max_relative_error_ = std::max(max_relative_error_, max_relative_error);
}

}  // namespace moesim::kernels
