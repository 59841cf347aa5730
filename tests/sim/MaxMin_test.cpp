#include "MaxMin.hpp"

#include <gtest/gtest.h>

using moesim::sim::detail::Demand;
using moesim::sim::detail::max_min_rates;
using moesim::sim::detail::water_fill;

TEST(MaxMin, TextbookExample) {
  // Links A (cap 10) and B (cap 4). Flow 0 crosses A and B, flow 1 only A, flow 2 only B.
  // B is the bottleneck: flows 0 and 2 get 2 each; flow 1 gets the rest of A: 10 - 2 = 8.
  auto r = max_min_rates({10, 4}, {Demand{{0, 1}}, Demand{{0}}, Demand{{1}}});
  EXPECT_DOUBLE_EQ(r[0], 2);
  EXPECT_DOUBLE_EQ(r[1], 8);
  EXPECT_DOUBLE_EQ(r[2], 2);
}

TEST(MaxMin, CapsFreezeEarly) {
  // One link of 9; flow 0 capped at 1: the other two split 8.
  auto r = max_min_rates({9}, {Demand{{0}, 1}, Demand{{0}}, Demand{{0}}});
  EXPECT_DOUBLE_EQ(r[0], 1);
  EXPECT_DOUBLE_EQ(r[1], 4);
  EXPECT_DOUBLE_EQ(r[2], 4);
}

TEST(MaxMin, WaterFillGivesSmallDemandsAllTheyAsk) {
  // 10 units among demands 1, 6, 6: 1, then 4.5 each.
  auto s = water_fill(10, {6, 1, 6});
  EXPECT_DOUBLE_EQ(s[0], 4.5);
  EXPECT_DOUBLE_EQ(s[1], 1);
  EXPECT_DOUBLE_EQ(s[2], 4.5);
}

TEST(MaxMin, WeightedWaterFillSplitsByWeightAndPassesOnWhatCapsLeave) {
  // 1.0 among caps 1, 0.4, 0.05 with weights 99, 33, 10 (142 in all). Per unit of weight the third
  // asks least: its share 10/142 = 0.0704 exceeds its cap, so it gets 0.05. The 0.95 left splits
  // 99 : 33 → 0.7125 and 0.2375, both under their caps. Zero weight gets nothing.
  auto s = moesim::sim::detail::weighted_water_fill(1.0, {1, 0.4, 0.05, 1}, {99, 33, 10, 0});
  EXPECT_DOUBLE_EQ(s[2], 0.05);
  EXPECT_DOUBLE_EQ(s[0], 0.7125);
  EXPECT_DOUBLE_EQ(s[1], 0.2375);
  EXPECT_DOUBLE_EQ(s[3], 0);
}
