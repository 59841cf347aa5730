#pragma once
/**
 * @file The correctness column: how many checked outputs are wrong, and the largest relative error.
 *
 * The relative error of one output is |value - reference| / scale. For a dot product the caller
 * passes scale = sum_k |a_k * b_k|, the quantity that bounds the rounding error of any summation
 * order (so cancellation in the reference does not inflate the error); with scale <= 0 the
 * denominator is max(|reference|, 1e-30). A NaN or infinite value is always wrong and makes the
 * maximum error infinite.
 */
#include <cstdint>

namespace moesim::kernels {

/** @brief Counts checked and wrong outputs against a relative tolerance. */
class ErrorTally {
 public:
  explicit ErrorTally(double tolerance) : tolerance_(tolerance) {}

  /** @brief Checks one output. */
  void add(double value, double reference, double scale = 0);
  /** @brief Adds another tally's counts (its tolerance is ignored). */
  void merge(const ErrorTally& other);
  /** @brief Records `count` outputs checked elsewhere (e.g. on the GPU) with their results. */
  void add_counts(std::int64_t checked, std::int64_t wrong, double max_relative_error);

  double tolerance() const { return tolerance_; }
  std::int64_t checked() const { return checked_; }
  std::int64_t wrong() const { return wrong_; }
  double max_relative_error() const { return max_relative_error_; }
  /** @brief True when something was checked and nothing was wrong. */
  bool is_pass() const { return checked_ > 0 && wrong_ == 0; }

 private:
  double tolerance_;
  std::int64_t checked_ = 0;
  std::int64_t wrong_ = 0;
  double max_relative_error_ = 0;
};

}  // namespace moesim::kernels
