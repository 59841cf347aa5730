#include "moesim/kernels/Statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace moesim::kernels {
namespace {

// Samples 1..5: mean 3; sample variance = (4+1+0+1+4)/4 = 2.5, stddev = sqrt(2.5) = 1.5811;
// cv = 1.5811 / 3 = 52.70 %; p50 = 3; p99 position = 4 * 0.99 = 3.96 -> 4 + 0.96 * (5 - 4) = 4.96.
TEST(StatisticsTest, SummarizesUnsortedSamples) {
  const SampleStats stats = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(stats.count, 5u);
  EXPECT_DOUBLE_EQ(stats.min, 1);
  EXPECT_DOUBLE_EQ(stats.max, 5);
  EXPECT_DOUBLE_EQ(stats.mean, 3);
  EXPECT_DOUBLE_EQ(stats.p50, 3);
  EXPECT_NEAR(stats.p99, 4.96, 1e-12);
  EXPECT_NEAR(stats.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(stats.cv_pct, std::sqrt(2.5) / 3 * 100, 1e-9);
}

// Even count {1, 2, 3, 10}: p50 position 1.5 -> 2.5 (the median is the mean of the middle two).
TEST(StatisticsTest, MedianOfEvenCountInterpolates) {
  EXPECT_DOUBLE_EQ(percentile({10, 1, 3, 2}, 50), 2.5);
}

TEST(StatisticsTest, SingleSampleHasNoSpread) {
  const SampleStats stats = summarize({7.5});
  EXPECT_DOUBLE_EQ(stats.p50, 7.5);
  EXPECT_DOUBLE_EQ(stats.p99, 7.5);
  EXPECT_DOUBLE_EQ(stats.stddev, 0);
  EXPECT_DOUBLE_EQ(stats.cv_pct, 0);
}

TEST(StatisticsTest, PercentileEndsAreMinAndMax) {
  EXPECT_DOUBLE_EQ(percentile({3, 9, 1}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({3, 9, 1}, 100), 9);
}

TEST(StatisticsTest, RejectsEmptyNanAndOutOfRangePercentile) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(percentile({1, 2}, 101), std::invalid_argument);
}

}  // namespace
}  // namespace moesim::kernels
