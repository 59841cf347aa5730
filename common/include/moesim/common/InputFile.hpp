#pragma once
/**
 * @file Reading an input file within bounds: it must be a regular file (a FIFO, a device such as
 * /dev/zero or a directory is refused at once instead of blocking or reading forever) no larger than
 * the limit of its kind, so no input can exhaust memory before it is rejected. The limits are
 * documented in docs/limits.md; the environment variable MOESIM_MAX_INPUT_MB overrides both.
 */
#include <cstddef>
#include <string>

namespace moesim {

/** @brief What an input holds, which decides how large it may be. */
enum class InputKind {
  SPEC,  ///< Hand-written descriptions: models, hardware profiles, sweeps, routing, clusters (16 MiB).
  DATA,  ///< Measurements and logs: results, nccl-tests logs, profiler traces, sweep results (512 MiB).
};

/** @brief The byte limit for `kind`: 16 MiB or 512 MiB, or MOESIM_MAX_INPUT_MB MiB when that is set. */
std::size_t input_limit_bytes(InputKind kind);

/**
 * @brief The whole content of `path`.
 * @throws ConfigError naming the file when it cannot be opened, is not a regular file, or is larger
 * than input_limit_bytes(kind).
 */
std::string read_input_file(const std::string& path, InputKind kind);

}  // namespace moesim
