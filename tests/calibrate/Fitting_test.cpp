// The fitting math, with every expectation worked out by hand in the comment above it.
#include "moesim/calibrate/Fitting.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "moesim/calibrate/CollectiveFit.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

TEST(Fitting, MedianGeometricMeanRounding) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);  // mean of the middle two
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_NEAR(geometric_mean({2, 8}), 4, 1e-12);               // sqrt(16)
  EXPECT_NEAR(geometric_mean({1.25, 5.0, 0.16}), 1.0, 1e-12);  // 1.25 x 5 x 0.16 = 1
  EXPECT_DOUBLE_EQ(round_significant(0.123456, 4), 0.1235);
  EXPECT_DOUBLE_EQ(round_significant(1234567, 3), 1230000);
  EXPECT_DOUBLE_EQ(round_significant(-6.789e-7, 2), -6.8e-7);
  EXPECT_THROW(geometric_mean({1, 0}), InternalError);
}

TEST(Fitting, ErrorSummaryKeepsMaxAndMeanOfAbsoluteRelativeErrors) {
  // (110 vs 100) -> 10%, (90 vs 100) -> 10%, (50 vs 40) -> 25%: max 25%, mean 15%.
  ErrorSummary e;
  e.add(110, 100);
  e.add(90, 100);
  e.add(50, 40);
  EXPECT_EQ(e.points, 3);
  EXPECT_NEAR(e.max_abs, 0.25, 1e-12);
  EXPECT_NEAR(e.mean_abs, 0.15, 1e-12);
}

TEST(Fitting, GemmGridFromMeasuredRows) {
  /*
   * Samples: m = 16 at min_nk 1024 (0.02) and 4096 (0.08);
   *          m = 256 at min_nk 1024 (0.40) and 1024 again (0.90) -> geometric mean sqrt(0.36) = 0.60.
   * Grid m {16, 64, 256, 1024} x min_nk {512, 2048, 8192}:
   *   row 16:  512 clamps to 0.02; 2048 is halfway in log2 between 1024 and 4096 -> 0.05; 8192 clamps to 0.08
   *   row 256: one sample -> 0.60 everywhere
   *   row 64:  halfway in log2 between 16 and 256 -> (row16 + row256) / 2 = 0.31, 0.325, 0.34
   *   row 1024: beyond the last measured m -> row 256
   */
  const std::vector<ShapeSample> samples{
      {16, 1024, 0.02}, {16, 4096, 0.08}, {256, 1024, 0.40}, {256, 1024, 0.90}};
  const auto grid = fill_gemm_grid({16, 64, 256, 1024}, {512, 2048, 8192}, samples);
  const std::vector<std::vector<double>> expected{
      {0.02, 0.05, 0.08}, {0.31, 0.325, 0.34}, {0.60, 0.60, 0.60}, {0.60, 0.60, 0.60}};
  ASSERT_EQ(grid.size(), expected.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    for (std::size_t j = 0; j < grid[i].size(); ++j)
      EXPECT_NEAR(grid[i][j], expected[i][j], 1e-12) << i << "," << j;
  }
}

TEST(Fitting, GemmGridIsCappedAtOne) {
  const auto grid = fill_gemm_grid({16}, {512}, {{16, 512, 1.2}});
  EXPECT_DOUBLE_EQ(grid[0][0], 1.0);
}

TEST(Fitting, BinLogGroupsByFactorFromTheSmallest) {
  /*
   * factor 4: bin 1 starts at 100 and holds x < 400: {100, 200, 300} -> x = cbrt(100*200*300) = 181.712,
   * value = median(0.1, 0.5, 0.3) = 0.3; bin 2 starts at 400 and holds x < 1600: {400, 1000} ->
   * x = sqrt(400000) = 632.456, value = (0.6 + 0.8) / 2 = 0.7.
   */
  const auto bins = bin_log({{300, 0.3}, {100, 0.1}, {1000, 0.8}, {200, 0.5}, {400, 0.6}}, 4);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_NEAR(bins[0].x, std::cbrt(100.0 * 200 * 300), 1e-9);
  EXPECT_NEAR(bins[0].value, 0.3, 1e-12);
  EXPECT_NEAR(bins[1].x, std::sqrt(400000.0), 1e-9);
  EXPECT_NEAR(bins[1].value, 0.7, 1e-12);
}

TEST(Fitting, MergeCurveKeepsScaledBasePointsOutsideTheMeasuredRange) {
  /*
   * Base: x {256, 1024, 4096, 16384}, value {0.2, 0.4, 0.6, 0.8}. Measured: (1024, 0.2), (4096, 0.45).
   * Below: base(1024) = 0.4 -> scale 0.2 / 0.4 = 0.5, so 256 keeps 0.2 x 0.5 = 0.1.
   * Above: base(4096) = 0.6 -> scale 0.45 / 0.6 = 0.75, so 16384 keeps 0.8 x 0.75 = 0.6.
   */
  const MergedCurve c =
      merge_curve({256, 1024, 4096, 16384}, {0.2, 0.4, 0.6, 0.8}, {{1024, 0.2}, {4096, 0.45}});
  EXPECT_EQ(c.x, (std::vector<double>{256, 1024, 4096, 16384}));
  ASSERT_EQ(c.value.size(), 4u);
  EXPECT_NEAR(c.value[0], 0.1, 1e-12);
  EXPECT_NEAR(c.value[1], 0.2, 1e-12);
  EXPECT_NEAR(c.value[2], 0.45, 1e-12);
  EXPECT_NEAR(c.value[3], 0.6, 1e-12);
  EXPECT_EQ(c.inherited_points, 2);
  EXPECT_NEAR(c.scale_low, 0.5, 1e-12);
  EXPECT_NEAR(c.scale_high, 0.75, 1e-12);
}

TEST(Fitting, ContentionFactorsInTheEnginesTerms) {
  /*
   * 4xH200 64 MiB all_reduce: 326.8 us alone, 1355.9 us under the GEMM, latency 6 steps x 7.184 us = 43.104
   * us: s = (1355.9 - 43.104) / (326.8 - 43.104) = 1312.796 / 283.696 = 4.62748.
   */
  EXPECT_NEAR(comm_bandwidth_slowdown(326.8e-6, 1355.9e-6, 43.104e-6), 1312.796 / 283.696, 1e-9);
  // GEMM 1.17x slower next to an 8-CTA NCCL kernel on 132 SMs: r = 1.17 x 124 / 132 = 1.099091.
  EXPECT_NEAR(residual_compute_slowdown(1.17, 132, 8), 1.17 * 124 / 132, 1e-12);
  // The inverse: 1.3 = 1.1 x 132 / (132 - c)  ->  c = 132 x (1 - 1.1 / 1.3) = 20.3077.
  EXPECT_NEAR(inferred_comm_sms(1.3, 1.1, 132), 132 * (1 - 1.1 / 1.3), 1e-12);
  EXPECT_THROW(comm_bandwidth_slowdown(10e-6, 20e-6, 10e-6), InternalError);
}

TEST(CollectiveFit, DropsLatencyBoundSizesAndMergesRepeats) {
  /*
   * all_to_all, 2 GPUs (steps 1, bus_bytes = size / 2). Latency region: 10 us at 1 KiB (twice: median of
   * {9, 11} = 10) -> alpha = 10 us.
   *   1 MiB at 10.5 us: transfer 0.5 us is 4.8% of the time (< 10%) -> dropped
   *   8 MiB at 30 us: transfer 20 us -> 4194304 B / 20 us = 209.7152 GB/s
   */
  const std::vector<SizeTime> points{{1024, 9e-6}, {1024, 11e-6}, {1048576, 10.5e-6}, {8388608, 30e-6}};
  const CollectiveFit fit = fit_collective(hw::CollectiveKind::ALL_TO_ALL, 2, points, 0.0);
  EXPECT_EQ(fit.latency_points, 1);
  EXPECT_NEAR(fit.step_latency_s, 10e-6, 1e-15);
  EXPECT_EQ(fit.dropped_points, 1);
  ASSERT_EQ(fit.bytes, std::vector<double>{8388608});
  EXPECT_NEAR(fit.busbw_Bps[0], 209.7152e9, 1e3);
}

TEST(CollectiveFit, FallsBackToTheBaseLatencyWithoutSmallSizes) {
  // all_gather on 4 GPUs: 3 steps of 2 us (base) = 6 us; 16 MiB at 66 us -> 12582912 B / 60 us = 209.7152
  // GB/s.
  const CollectiveFit fit = fit_collective(hw::CollectiveKind::ALL_GATHER, 4, {{16777216, 66e-6}}, 2e-6);
  EXPECT_EQ(fit.latency_points, 0);
  EXPECT_NEAR(fit.step_latency_s, 2e-6, 1e-15);
  ASSERT_EQ(fit.busbw_Bps.size(), 1u);
  EXPECT_NEAR(fit.busbw_Bps[0], 209.7152e9, 1e3);
}

TEST(Fitting, LineThroughPointsAndThroughOneX) {
  // (1, 3), (2, 5), (3, 7.5): mean x 2, mean y 5.1667; Sxy = (-1)(-2.1667) + 0 + (1)(2.3333) = 4.5,
  // Sxx = 2 -> slope 2.25, intercept 5.1667 - 4.5 = 0.6667.
  const LineFit line = fit_line({1, 2, 3}, {3, 5, 7.5});
  EXPECT_NEAR(line.slope, 2.25, 1e-12);
  EXPECT_NEAR(line.intercept, 15.5 / 3 - 4.5, 1e-12);
  // One distinct x: the line through the origin and the mean.
  const LineFit origin = fit_line({4, 4}, {10, 14});
  EXPECT_DOUBLE_EQ(origin.intercept, 0);
  EXPECT_DOUBLE_EQ(origin.slope, 3);
}

}  // namespace
}  // namespace moesim::calibrate
