// The headline metrics are one list: the record, sweep columns and reports/METRICS.md agree on it.
#include "moesim/reports/Metrics.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace moesim::reports;

TEST(Metrics, EveryHeadlineMetricIsDocumented) {
  std::ifstream in(std::string(MOESIM_TEST_DATA_DIR) + "/reports/METRICS.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const Metric& m : headline_metrics())
    EXPECT_NE(text.str().find("| `" + m.name + "` |"), std::string::npos)
        << m.name << " has no METRICS.md row";
}

TEST(Metrics, RoundingIsToTheEnginesNanosecondAndAThousandthOfAPercent) {
  EXPECT_DOUBLE_EQ(rounded(1.23456789, Rounding::MILLISECONDS), 1.234568);
  EXPECT_DOUBLE_EQ(rounded(12.34567, Rounding::PERCENT), 12.346);
  EXPECT_DOUBLE_EQ(rounded(2.5e5 + 0.6, Rounding::WHOLE), 250001);
}

TEST(Metrics, SweepColumnsEndWithTheSpeedup) {
  const auto columns = sweep_columns();
  ASSERT_FALSE(columns.empty());
  EXPECT_EQ(columns.front(), "step_ms");
  EXPECT_EQ(columns.back(), "speedup");
}
