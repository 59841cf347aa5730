#include "moesim/hwprofiles/LogInterpolation.hpp"

#include <gtest/gtest.h>

using moesim::hw::interpolate_bilinear_log;
using moesim::hw::interpolate_log_x;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

TEST(LogInterpolation, MidpointInLogSpace) {
  // 1 MiB -> 100, 4 MiB -> 200. log2: 20 -> 100, 22 -> 200; 2 MiB is log2 21, halfway: 150.
  std::vector<double> bytes{1 * kMiB, 4 * kMiB};
  std::vector<double> rate{100, 200};
  EXPECT_DOUBLE_EQ(interpolate_log_x(bytes, rate, 2 * kMiB), 150.0);
  // 8/3 MiB is not the log midpoint: log2(8/3) = 1.415 of the 2-octave span -> 100 + 100 * 1.415/2 = 170.75.
  EXPECT_NEAR(interpolate_log_x(bytes, rate, 8.0 / 3.0 * kMiB), 170.75, 0.01);
}

TEST(LogInterpolation, ClampsAtBothEndsAndExactPoints) {
  std::vector<double> xs{16, 64, 256};
  std::vector<double> ys{0.1, 0.3, 0.9};
  EXPECT_DOUBLE_EQ(interpolate_log_x(xs, ys, 1), 0.1);    // below the table: first value
  EXPECT_DOUBLE_EQ(interpolate_log_x(xs, ys, 0), 0.1);    // non-positive: first value, no log(0)
  EXPECT_DOUBLE_EQ(interpolate_log_x(xs, ys, 1e9), 0.9);  // above: last value
  EXPECT_DOUBLE_EQ(interpolate_log_x(xs, ys, 64), 0.3);   // an axis point returns its value
  // 128 is halfway between 64 and 256 in log2 (6 -> 8): 0.3 + 0.6/2 = 0.6.
  EXPECT_DOUBLE_EQ(interpolate_log_x(xs, ys, 128), 0.6);
}

TEST(LogInterpolation, SinglePointTableIsConstant) {
  EXPECT_DOUBLE_EQ(interpolate_log_x({1024}, {42}, 1), 42);
  EXPECT_DOUBLE_EQ(interpolate_log_x({1024}, {42}, 1e12), 42);
}

TEST(LogInterpolation, BilinearInBothLogAxes) {
  // Grid (x: 16, 256; y: 1024, 4096) = [[0.1, 0.2], [0.5, 0.8]].
  // At (64, 2048): x weight (6-4)/(8-4) = 0.5, y weight (11-10)/(12-10) = 0.5.
  // Row 16 at y: 0.15; row 256 at y: 0.65; halfway: 0.4.
  std::vector<std::vector<double>> grid{{0.1, 0.2}, {0.5, 0.8}};
  EXPECT_DOUBLE_EQ(interpolate_bilinear_log({16, 256}, {1024, 4096}, grid, 64, 2048), 0.4);
  // (32, 4096): x weight 0.25 on the last column: 0.2 + 0.25 * 0.6 = 0.35.
  EXPECT_DOUBLE_EQ(interpolate_bilinear_log({16, 256}, {1024, 4096}, grid, 32, 4096), 0.35);
  // Clamped in both axes.
  EXPECT_DOUBLE_EQ(interpolate_bilinear_log({16, 256}, {1024, 4096}, grid, 1, 1), 0.1);
  EXPECT_DOUBLE_EQ(interpolate_bilinear_log({16, 256}, {1024, 4096}, grid, 1e6, 1e6), 0.8);
  EXPECT_DOUBLE_EQ(interpolate_bilinear_log({16, 256}, {1024, 4096}, grid, 1e6, 1), 0.5);
}
