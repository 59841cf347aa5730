// nccl-tests logs -> rows -> collective tables. The logs in data/ are written by hand in nccl-tests'
// documented stdout format (doc/PERFORMANCE.md; the header and Rank lines of all_reduce_perf 2.13).
#include "moesim/calibrate/NcclTestsLog.hpp"

#include <gtest/gtest.h>

#include "moesim/calibrate/CollectiveFit.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

const std::string kData = MOESIM_CALIBRATE_TEST_DATA;

std::vector<SizeTime> size_times(const NcclTestsLog& log) {
  std::vector<SizeTime> out;
  for (const CollectiveCase& c : log.cases()) out.push_back({c.bytes, c.time_s});
  return out;
}

TEST(NcclTestsLog, ParsesAllReducePerfHeaderAndRows) {
  const NcclTestsLog log = load_nccl_tests_log(kData + "/all_reduce_perf_8xh100.log");
  EXPECT_EQ(log.program, "all_reduce_perf");
  EXPECT_EQ(log.op, "all_reduce");
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.hosts, 1);
  EXPECT_EQ(log.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.version, "nccl-tests 2.13.10, NCCL 2.21.5");  // nccl-library=22105
  ASSERT_EQ(log.rows.size(), 9u);
  const NcclTestsRow& row = log.rows[6];  // "2097152 524288 float sum -1 32.35 64.83 113.45 0 32.67 ..."
  EXPECT_EQ(row.line, 25);
  EXPECT_DOUBLE_EQ(row.bytes, 2097152);
  EXPECT_DOUBLE_EQ(row.count, 524288);
  EXPECT_EQ(row.type, "float");
  EXPECT_EQ(row.redop, "sum");
  EXPECT_DOUBLE_EQ(row.time_us, 32.35);
  EXPECT_DOUBLE_EQ(row.algbw_GBps, 64.83);
  EXPECT_DOUBLE_EQ(row.busbw_GBps, 113.45);  // nccl-tests busbw: algbw x 2(n-1)/n, latency included
  EXPECT_DOUBLE_EQ(row.in_place_time_us, 32.67);
  EXPECT_DOUBLE_EQ(row.in_place_busbw_GBps, 112.32);
}

TEST(NcclTestsLog, AllReduceBusbwTableWithLatencyTakenOut) {
  /*
   * System: 8 GPUs, all-reduce, steps = 2(n-1) = 14, bus_bytes = size x 2(n-1)/n = 1.75 size.
   * Latency region (<= 64 KiB): 14.00 14.20 14.00 14.40 14.00 us -> median alpha = 14.00 us,
   * step latency = 14 / 14 = 1.00 us.
   * Table (transfer = t - alpha, busbw = bus_bytes / transfer):
   *   256 KiB  18.00 us -> 4.00 us,   458752 B -> 114.688 GB/s   (4/18 = 22% >= 10%: kept)
   *   2 MiB    32.35 us -> 18.35 us, 3670016 B -> 200.0009 GB/s
   *   16 MiB   97.89 us -> 83.89 us, 29360128 B -> 349.9836 GB/s
   *   128 MiB 666.45 us -> 652.45 us, 234881024 B -> 359.9985 GB/s
   */
  const NcclTestsLog log = load_nccl_tests_log(kData + "/all_reduce_perf_8xh100.log");
  const CollectiveFit fit = fit_collective(hw::CollectiveKind::ALL_REDUCE, log.ranks, size_times(log), 0.0);
  EXPECT_EQ(fit.latency_points, 5);
  EXPECT_NEAR(fit.step_latency_s, 1.00e-6, 1e-12);
  ASSERT_EQ(fit.bytes, (std::vector<double>{262144, 2097152, 16777216, 134217728}));
  EXPECT_NEAR(fit.busbw_Bps[0], 114.688e9, 1e3);
  EXPECT_NEAR(fit.busbw_Bps[1], 200.0009e9, 1e5);
  EXPECT_NEAR(fit.busbw_Bps[2], 349.9836e9, 1e5);
  EXPECT_NEAR(fit.busbw_Bps[3], 359.9985e9, 1e5);
}

TEST(NcclTestsLog, AllToAllBusbwTable) {
  /*
   * alltoall_perf, 8 GPUs: steps = 1, bus_bytes = size x 7/8. #wrong is N/A (run with -c 0).
   * Latency region: 25.00 25.40 24.80 us -> alpha = 25.00 us = step latency.
   *   512 KiB  29.00 us ->   4.00 us,    458752 B -> 114.688 GB/s
   *   4 MiB    39.68 us ->  14.68 us,   3670016 B -> 250.0011 GB/s
   *   32 MiB  116.75 us ->  91.75 us,  29360128 B -> 320.0014 GB/s
   *   256 MiB 729.64 us -> 704.64 us, 234881024 B -> 333.3347 GB/s
   * The MPI warning line before the header is not a row.
   */
  const NcclTestsLog log = load_nccl_tests_log(kData + "/alltoall_perf_8xh100.log");
  EXPECT_EQ(log.op, "all_to_all");
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 7u);
  EXPECT_DOUBLE_EQ(log.rows[3].busbw_GBps, 15.82);
  const CollectiveFit fit = fit_collective(hw::CollectiveKind::ALL_TO_ALL, log.ranks, size_times(log), 0.0);
  EXPECT_NEAR(fit.step_latency_s, 25.0e-6, 1e-12);
  ASSERT_EQ(fit.bytes, (std::vector<double>{524288, 4194304, 33554432, 268435456}));
  EXPECT_NEAR(fit.busbw_Bps[0], 114.688e9, 1e3);
  EXPECT_NEAR(fit.busbw_Bps[1], 250.0011e9, 1e5);
  EXPECT_NEAR(fit.busbw_Bps[2], 320.0014e9, 1e5);
  EXPECT_NEAR(fit.busbw_Bps[3], 333.3347e9, 1e5);
}

constexpr const char* kHeader =
    "# Collective test starting: all_gather_perf\n"
    "#  Rank  0 Group  0 Pid  1 on  a device  0 [0x18] GPU\n"
    "#  Rank  1 Group  0 Pid  2 on  b device  0 [0x18] GPU\n";

TEST(NcclTestsLog, TwoHostsMakeAnInterNodeGroup) {
  const NcclTestsLog log = parse_nccl_tests_log(
      std::string(kHeader) +
          "  1048576  131072  float  none  -1  20.0  52.43  26.21  0  20.0  52.43  26.21  0\n",
      "ag.log");
  EXPECT_EQ(log.op, "all_gather");
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.hosts, 2);
}

void expect_error(const std::string& text, const std::string& file, const std::string& expected) {
  try {
    parse_nccl_tests_log(text, file);
    FAIL() << "no error for " << file;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

TEST(NcclTestsLog, MalformedRowsNameTheFileAndLine) {
  // Line 4 has only 9 columns (a truncated copy-paste).
  expect_error(std::string(kHeader) + "  1048576  131072  float  none  -1  20.0  52.43  26.21  0\n",
               "cut.log", "cut.log:4: expected 13 columns");
  expect_error(
      std::string(kHeader) + "  1048576  131072  float  none  -1  2o.0  52.43  26.21  0  20.0  1  1  0\n",
      "typo.log", "typo.log:4: column 6 = \"2o.0\": expected a number");
}

TEST(NcclTestsLog, RejectsLogsWithoutRowsCollectiveOrRanks) {
  expect_error("# nThread 1 nGpus 8\n# just a header\n", "empty.log", "empty.log: no nccl-tests result rows");
  expect_error(
      "#  Rank  0 Group  0 Pid  1 on  a device  0 [0x18] GPU\n  8  2  float  sum  -1  1  0  0  0  1  0  0  "
      "0\n",
      "run7.log", "run7.log: cannot tell the collective");
  expect_error(
      "# Collective test starting: all_reduce_perf\n  8  2  float  sum  -1  1  0  0  0  1  0  0  0\n",
      "norank.log", "cannot tell the group size");
}

TEST(NcclTestsLog, CollectiveFromTheFileNameWhenTheLogDoesNotSay) {
  const NcclTestsLog log = parse_nccl_tests_log(
      "#  Rank  0 Group  0 Pid  1 on  a device  0 [0x18] GPU\n#  Rank  1 Group  0 Pid  1 on  a device  1 "
      "[0x19] GPU\n"
      "  8  2  float  sum  -1  1  0  0  0  1  0  0  0\n",
      "logs/reducescatter_2gpu.txt");
  EXPECT_EQ(log.op, "reduce_scatter");
}

}  // namespace
}  // namespace moesim::calibrate
