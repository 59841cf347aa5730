#pragma once
/** @file The text of a trace or record file, gzip'd or not (PyTorch writes `*.trace.json.gz`). */
#include <string>

namespace moesim::traces {

/**
 * @brief The whole text of `path`, inflated when it starts with the gzip magic bytes. ConfigError naming the
 * file when it cannot be read or is not a regular file (common/InputFile.hpp), is a corrupt gzip stream, or
 * is or expands to more than the limit of a data input (input_limit_bytes(InputKind::DATA)).
 */
std::string read_trace_text(const std::string& path);

}  // namespace moesim::traces
