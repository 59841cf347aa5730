#pragma once
/**
 * @file Writing outputs so that a failure never leaves a torn or empty file: the text goes to a
 * temporary file beside the target, which replaces the target only once every byte was written and the
 * file closed. Any write error (a full disk, a quota, a vanished directory) is a ConfigError that names
 * the file and the system's reason, and the temporary file is removed.
 */
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace moesim {

/** @brief Writes what `body` streams to `path`, replacing the file atomically (rename) on success. */
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& body);

/**
 * @brief Like write_file_atomically, but never replaces a file: the first of path, path.1, ... path.999
 * that does not exist is created (atomically, with link()), and its name returned.
 */
std::string write_new_file_atomically(const std::string& path,
                                      const std::function<void(std::ostream&)>& body);

/**
 * @brief Checks, before a long run, that `path` can be written: it is not a directory, its directory
 * exists and is writable, and an existing file is writable. ConfigError naming `flag` and the path.
 */
void check_output_path(const std::string& flag, const std::string& path);

/** @brief A file a command reads or writes, and the flag that named it (for messages). */
struct NamedPath {
  std::string flag;
  std::string path;
};

/**
 * @brief ConfigError when two outputs name one file, or an output names an input (so neither can be
 * overwritten by the run). Paths are compared after resolving "..", symbolic links and hard links; "-"
 * (standard output) and empty paths are skipped.
 */
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace moesim
