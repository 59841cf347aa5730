#pragma once
/**
 * @file Summary statistics of per-iteration timings.
 *
 * Percentiles use linear interpolation between the two closest ranks (numpy's default):
 * for sorted samples x[0..n-1], p in [0, 100], the position is (n - 1) * p / 100.
 * CV% is the sample standard deviation (n - 1 denominator) over the mean, times 100.
 */
#include <cstddef>
#include <vector>

namespace moesim::kernels {

/** @brief Min, percentiles, mean and spread of one set of samples (all in the samples' unit). */
struct SampleStats {
  std::size_t count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double stddev = 0;  ///< sample standard deviation (n - 1); 0 for fewer than two samples
  double cv_pct = 0;  ///< stddev / mean * 100; 0 when the mean is 0
};

/** @brief The p-th percentile (0..100) of samples, linear interpolation; throws on empty input. */
double percentile(std::vector<double> samples, double p);

/** @brief Summarizes samples; throws std::invalid_argument on an empty vector or a NaN sample. */
SampleStats summarize(const std::vector<double>& samples);

}  // namespace moesim::kernels
