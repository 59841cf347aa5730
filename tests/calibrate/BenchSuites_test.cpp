// The suites table that `moesim bench` and run_calibration.sh share.
#include "moesim/calibrate/BenchSuites.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

using namespace moesim;
using namespace moesim::calibrate;

TEST(BenchSuites, ReadsStepsInOrderWithTheirArguments) {
  const auto table = parse_bench_suites(
      "# comment\n\ngemm gemm gemm_bench 1 -w 5 -n 30\npower power power_bench 1\npower power_peer "
      "power_bench all "
      "--loads idle,peer\n",
      "t.tsv");
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].args, "-w 5 -n 30");
  EXPECT_TRUE(table[2].all_gpus);
  const auto power = steps_of(table, {"power"});
  ASSERT_EQ(power.size(), 2u);
  EXPECT_EQ(power[1].step, "power_peer");
  EXPECT_EQ(power[1].args, "--loads idle,peer");
  EXPECT_TRUE(power[0].args.empty());
}

TEST(BenchSuites, BadLinesAndUnknownSuitesAreNamed) {
  try {
    parse_bench_suites("gemm gemm gemm_bench 2 -w 5\n", "t.tsv");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("t.tsv:1"), std::string::npos) << e.what();
  }
  const auto table = parse_bench_suites("gemm gemm gemm_bench 1\n", "t.tsv");
  EXPECT_THROW(steps_of(table, {"gemm", "nope"}), ConfigError);
}

TEST(BenchSuites, TheShippedTableHoldsMoesimBenchsDefaultSuites) {
  const auto table = load_bench_suites(std::string(MOESIM_TEST_DATA_DIR) + "/kernels/tools/bench_suites.tsv");
  EXPECT_NO_THROW(steps_of(table, {"gemm", "grouped_gemm", "attention", "memory", "collectives", "contention",
                                   "launch", "power", "persistent", "layer"}));
}
