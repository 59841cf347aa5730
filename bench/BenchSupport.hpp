#pragma once
/** @file What the benchmarks share: peak memory per benchmark row and the paths they read. */
#include <string>

namespace moesim::bench {

/**
 * @brief Resets the process's peak resident set (Linux: writes 5 to /proc/self/clear_refs), so the next
 * peak_rss_mib() covers what ran since. Returns false where the kernel does not allow it.
 */
bool reset_peak_rss();

/** @brief Peak resident set (VmHWM of /proc/self/status) in MiB; 0 where it cannot be read. */
double peak_rss_mib();

/** @brief The bench/ source folder (scenario files the benchmarks run). */
std::string bench_dir();

}  // namespace moesim::bench
