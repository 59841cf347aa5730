#include "moesim/kernels/Statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace moesim::kernels {
namespace {

double sorted_percentile(const std::vector<double>& sorted, double p) {
  if (p < 0 || p > 100) throw std::invalid_argument("percentile must be within [0, 100]");
  const double position = static_cast<double>(sorted.size() - 1) * p / 100.0;
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

void require_valid(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample set");
  for (double value : samples) {
    if (std::isnan(value)) throw std::invalid_argument("statistics of a NaN sample");
  }
}

}  // namespace

double percentile(std::vector<double> samples, double p) {
  require_valid(samples);
  std::sort(samples.begin(), samples.end());
  return sorted_percentile(samples, p);
}

SampleStats summarize(const std::vector<double>& samples) {
  require_valid(samples);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  SampleStats stats;
  stats.count = sorted.size();
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  stats.p50 = sorted_percentile(sorted, 50);
  stats.p99 = sorted_percentile(sorted, 99);
  if (sorted.size() > 1) {
    double squares = 0;
    for (double value : sorted) squares += (value - stats.mean) * (value - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(sorted.size() - 1));
  }
  stats.cv_pct = stats.mean != 0 ? stats.stddev / std::fabs(stats.mean) * 100.0 : 0.0;
  return stats;
}

}  // namespace moesim::kernels
