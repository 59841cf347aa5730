#pragma once
/**
 * @file The standard stdout of nccl-tests / rccl-tests (`all_reduce_perf`, `alltoall_perf`, ...):
 *
 *   # nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807
 *   # Collective test starting: all_reduce_perf
 *   # nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...
 *   #  Rank  0 Group  0 Pid  1887 on  worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3
 *   ...
 *   #                                                     out-of-place                       in-place
 *   #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw
 * busbw #wrong #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)
 * (GB/s)  (GB/s) 8388608       2097152     float     sum      -1    91.10   92.08  161.14 0    94.94   88.36
 * 154.63      0 # Avg bus bandwidth    : 161.1
 *
 * Data rows have 13 columns (size count type redop root, then time algbw busbw #wrong out-of-place
 * and in-place); lines starting with '#' and other text (NCCL INFO lines, MPI chatter) are skipped.
 * The collective comes from the "Collective test starting" line, else from the file name
 * (all_reduce, all_gather, reduce_scatter, alltoall / all_to_all); the group from the Rank lines.
 */
#include <string>
#include <vector>

#include "moesim/calibrate/BenchResults.hpp"

namespace moesim::calibrate {

/** @brief One nccl-tests row: both halves as printed. */
struct NcclTestsRow {
  int line = 0;  ///< 1-based line number in the log
  double bytes = 0;
  double count = 0;
  std::string type;
  std::string redop;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;  ///< out-of-place
  double wrong = 0;  ///< out-of-place #wrong (nccl-tests prints N/A with -c 0: 0)
  double in_place_time_us = 0, in_place_algbw_GBps = 0, in_place_busbw_GBps = 0;
};

/** @brief A parsed log. */
struct NcclTestsLog {
  std::string file;
  std::string program;  ///< e.g. all_reduce_perf, when the log says so
  std::string op;      ///< all_reduce, all_gather, reduce_scatter, all_to_all, or the program name for others
  int ranks = 0;       ///< distinct ranks listed in the "# Rank" lines
  int hosts = 0;       ///< distinct host names in those lines
  std::string device;  ///< device name of rank 0
  std::string version;  ///< "nccl-tests 2.17.6, NCCL 2.28.7" or "rccl-tests ..." when printed
  std::vector<NcclTestsRow> rows;

  /** @brief The rows as collective cases (out-of-place time), for fitting. */
  std::vector<CollectiveCase> cases() const;
};

/**
 * @brief Parses a log's text. ConfigError "file:LINE: ..." for a data row that is malformed (wrong
 * column count, a number that is not one, a row before any Rank line), and "file: ..." when the log
 * has no rows or its collective cannot be told.
 */
NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file);

/** @brief Reads and parses a log file. */
NcclTestsLog load_nccl_tests_log(const std::string& path);

}  // namespace moesim::calibrate
