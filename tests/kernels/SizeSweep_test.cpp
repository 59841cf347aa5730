#include "moesim/kernels/SizeSweep.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace moesim::kernels {
namespace {

TEST(SizeSweepTest, FormatsExactMultiples) {
  EXPECT_EQ(format_bytes(0), "0");
  EXPECT_EQ(format_bytes(1536), "1536");
  EXPECT_EQ(format_bytes(2048), "2K");
  EXPECT_EQ(format_bytes(64u << 20), "64M");
  EXPECT_EQ(format_bytes(1ULL << 30), "1G");
}

// 8 B .. 1 GiB by 2: 2^3 .. 2^30 is 28 sizes, as nccl-tests' -b 8 -e 1G -f 2.
TEST(SizeSweepTest, GeometricSweepIncludesBothEnds) {
  const auto sizes = geometric_sizes(8, 1ULL << 30, 2);
  ASSERT_EQ(sizes.size(), 28u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 1ULL << 30);
  EXPECT_EQ(geometric_sizes(3, 10, 2), (std::vector<std::uint64_t>{3, 6}));
  EXPECT_THROW(geometric_sizes(8, 16, 1.0), std::invalid_argument);
  EXPECT_THROW(geometric_sizes(16, 8, 2), std::invalid_argument);
  EXPECT_THROW(geometric_sizes(0, 8, 2), std::invalid_argument);
}

TEST(SizeSweepTest, LinearSweepStopsAtMax) {
  EXPECT_EQ(linear_sizes(100, 350, 100), (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(linear_sizes(5, 5, 1), (std::vector<std::uint64_t>{5}));
  EXPECT_THROW(linear_sizes(1, 5, 0), std::invalid_argument);
}

TEST(SizeSweepTest, AlignDown) {
  EXPECT_EQ(align_down(1000, 64), 960u);
  EXPECT_EQ(align_down(64, 64), 64u);
  EXPECT_EQ(align_down(63, 64), 0u);
  EXPECT_THROW(align_down(1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace moesim::kernels
