#pragma once
/** @file The text of a trace or record file, gzip'd or not (PyTorch writes `*.trace.json.gz`). */
#include <cstddef>
#include <string>

namespace moesim::traces {

/** @brief Largest text a trace file may expand to (1 GiB): larger inputs are refused, not read into memory.
 */
inline constexpr std::size_t kMaxTraceTextBytes = std::size_t{1} << 30;

/**
 * @brief The whole text of `path`, inflated when it starts with the gzip magic bytes. ConfigError naming the
 * file when it cannot be read, is a corrupt gzip stream, or expands past kMaxTraceTextBytes.
 */
std::string read_trace_text(const std::string& path);

}  // namespace moesim::traces
