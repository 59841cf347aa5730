#include "moesim/kernels/UnevenSplit.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace moesim::kernels {
namespace {

std::uint64_t row_sum(const std::vector<std::uint64_t>& c, int ranks, int s) {
  std::uint64_t sum = 0;
  for (int r = 0; r < ranks; ++r) sum += c[static_cast<std::size_t>(s * ranks + r)];
  return sum;
}

std::uint64_t column_sum(const std::vector<std::uint64_t>& c, int ranks, int r) {
  std::uint64_t sum = 0;
  for (int s = 0; s < ranks; ++s) sum += c[static_cast<std::size_t>(s * ranks + r)];
  return sum;
}

// The 8-rank case once underflowed: seven draws of up to 1.75 chunks exceeded the row's 8 chunks and
// the excess was taken from one count that was smaller than it.
TEST(UnevenSplit, EveryRowSendsTheEvenShareAndNoCountWrapsAround) {
  for (int ranks : {1, 2, 3, 4, 8, 16}) {
    for (std::uint64_t chunk : {1ULL, 2ULL, 1024ULL, 16777216ULL}) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        const auto counts = uneven_all_to_all_counts(ranks, chunk, seed);
        ASSERT_EQ(counts.size(), static_cast<std::size_t>(ranks * ranks));
        for (int s = 0; s < ranks; ++s) {
          EXPECT_EQ(row_sum(counts, ranks, s), chunk * static_cast<std::uint64_t>(ranks));
          EXPECT_LE(column_sum(counts, ranks, s), 2 * chunk * static_cast<std::uint64_t>(ranks));
        }
        for (std::uint64_t count : counts) EXPECT_LE(count, chunk * static_cast<std::uint64_t>(ranks));
      }
    }
  }
}

// Weights in [0.25, 1.75] over a row of 8 sum to at most 14 and at least 2: every off-diagonal share is
// at least 0.25/14 of the row, and none more than 1.75/2.
TEST(UnevenSplit, SharesStayWithinTheWeightsRatio) {
  const std::uint64_t chunk = 1 << 20;
  const auto counts = uneven_all_to_all_counts(8, chunk, 7);
  const double row = 8.0 * chunk;
  bool uneven = false;
  for (int s = 0; s < 8; ++s) {
    for (int r = 0; r < 8; ++r) {
      if (r == s) continue;
      const double share = static_cast<double>(counts[static_cast<std::size_t>(s * 8 + r)]) / row;
      EXPECT_GE(share, 0.25 / 14.0 - 1e-9);
      EXPECT_LE(share, 1.75 / 2.0);
      if (counts[static_cast<std::size_t>(s * 8 + r)] != chunk) uneven = true;
    }
  }
  EXPECT_TRUE(uneven);
}

TEST(UnevenSplit, SameSeedSameCountsOtherSeedOtherCounts) {
  EXPECT_EQ(uneven_all_to_all_counts(4, 4096, 3), uneven_all_to_all_counts(4, 4096, 3));
  EXPECT_NE(uneven_all_to_all_counts(4, 4096, 3), uneven_all_to_all_counts(4, 4096, 4));
  EXPECT_THROW(uneven_all_to_all_counts(0, 4096, 3), std::invalid_argument);
}

// Hand count, 4 ranks, chunk 100, hot 2: ranks 1-3 send 200 to rank 0 and (400 - 200) / 3 = 66 to
// each of ranks 1-3, the 2 left over to themselves; rank 0 receives 100 + 3 x 200 = 700.
TEST(UnevenSplit, HotRankInboundRowsStayEvenAndRankZeroReceivesHotShares) {
  const auto in = hot_rank_counts(4, 100, 2.0, false);
  const std::vector<std::uint64_t> expected = {100, 100, 100, 100,  //
                                               200, 68,  66,  66,   //
                                               200, 66,  68,  66,   //
                                               200, 66,  66,  68};
  EXPECT_EQ(in, expected);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(row_sum(in, 4, s), 400u);
  EXPECT_EQ(column_sum(in, 4, 0), 700u);
  const auto out = hot_rank_counts(4, 100, 2.0, true);
  EXPECT_EQ(row_sum(out, 4, 0), 700u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(column_sum(out, 4, r), 400u);
  EXPECT_EQ(hot_rank_counts(8, 64, 1.0, false), std::vector<std::uint64_t>(64, 64));
  EXPECT_THROW(hot_rank_counts(4, 100, 4.0, false), std::invalid_argument);
  EXPECT_THROW(hot_rank_counts(1, 100, 1.0, false), std::invalid_argument);
}

}  // namespace
}  // namespace moesim::kernels
