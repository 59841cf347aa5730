#include "moesim/kernels/TextTable.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace moesim::kernels {
namespace {

TEST(TextTableTest, TwoHashHeaderRowsAndPlainDataRows) {
  const TextTable table({{"size", "B", 6}, {"time", "us", 7}, {"#wrong", "", 6}});
  EXPECT_EQ(table.header(), "#   size    time #wrong\n#    (B)    (us)       \n");
  EXPECT_EQ(table.row({"1024", "12.50", "0"}), "    1024   12.50      0\n");
  EXPECT_THROW(table.row({"1"}), std::invalid_argument);
}

TEST(TextTableTest, NumberFormats) {
  EXPECT_EQ(format_fixed(3.14159, 2), "3.14");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 2), "nan");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 2), "-inf");
  EXPECT_EQ(format_general(0.000123456), "0.000123");
  EXPECT_EQ(format_general(1.5e-9), "1.5e-09");
}

}  // namespace
}  // namespace moesim::kernels
