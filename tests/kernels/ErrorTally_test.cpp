#include "moesim/kernels/ErrorTally.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace moesim::kernels {
namespace {

// Tolerance 1e-2. (101, 100): |1| / 100 = 0.01, not above the tolerance -> right.
// (103, 100): 0.03 -> wrong. (0.5, 0, scale 100): 0.5 / 100 = 0.005 -> right (scale used).
TEST(ErrorTallyTest, CountsAgainstTolerance) {
  ErrorTally tally(1e-2);
  tally.add(101, 100);
  tally.add(103, 100);
  tally.add(0.5, 0, 100);
  EXPECT_EQ(tally.checked(), 3);
  EXPECT_EQ(tally.wrong(), 1);
  EXPECT_NEAR(tally.max_relative_error(), 0.03, 1e-12);
  EXPECT_FALSE(tally.is_pass());
}

TEST(ErrorTallyTest, NanIsAlwaysWrong) {
  ErrorTally tally(1.0);
  tally.add(std::numeric_limits<double>::quiet_NaN(), 1);
  EXPECT_EQ(tally.wrong(), 1);
  EXPECT_TRUE(std::isinf(tally.max_relative_error()));
}

TEST(ErrorTallyTest, MergeAndCountsAccumulate) {
  ErrorTally a(1e-3);
  a.add(1, 1);
  ErrorTally b(1e-3);
  b.add_counts(10, 0, 2e-4);
  a.merge(b);
  EXPECT_EQ(a.checked(), 11);
  EXPECT_EQ(a.wrong(), 0);
  EXPECT_DOUBLE_EQ(a.max_relative_error(), 2e-4);
  EXPECT_TRUE(a.is_pass());
  EXPECT_FALSE(ErrorTally(1).is_pass());
}

}  // namespace
}  // namespace moesim::kernels
