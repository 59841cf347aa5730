#pragma once
/**
 * @file The fuzz targets: one per input loader, each taking the bytes of one input file. The same table
 * drives the libFuzzer binary (FuzzMain.cpp, clang only) and the corpus replay test (CorpusReplay.cpp, any
 * compiler), so adding a loader is one entry in fuzz_targets() and a folder of seeds in corpus/.
 *
 * The invariant every target checks: an input ends in success or in a typed input error (ConfigError,
 * ScheduleError); any other exception, a crash or a sanitizer report is a finding.
 */
#include <string>
#include <vector>

namespace moesim::fuzz {

/** @brief One loader under fuzzing. */
struct FuzzTarget {
  const char* name;                       ///< also the corpus folder: tests/fuzz/corpus/<name>/
  void (*load)(const std::string& text);  ///< loads `text` as the file would be; may throw typed errors
};

/** @brief Every target, in a fixed order. */
const std::vector<FuzzTarget>& fuzz_targets();

/** @brief The target called `name`, or nullptr. */
const FuzzTarget* find_fuzz_target(const std::string& name);

/** @brief Runs `target` on `text`; true when it ended in success or a typed input error (the invariant). */
bool run_fuzz_target(const FuzzTarget& target, const std::string& text);

}  // namespace moesim::fuzz
