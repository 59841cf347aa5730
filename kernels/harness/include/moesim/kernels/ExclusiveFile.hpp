#pragma once
/**
 * @file Output files that never overwrite: `name`, else `name.1`, `name.2`, ...
 *
 * Each candidate is opened with fopen mode "wx" (O_CREAT | O_EXCL), so two runs that start at the
 * same moment still get different files.
 */
#include <cstdio>
#include <string>

namespace moesim::kernels {

/** @brief An exclusively created file, closed on destruction. */
class ExclusiveFile {
 public:
  /**
   * @brief Creates `path`, or the first free `path.N` (N = 1, 2, ... up to max_suffix).
   * @throws std::runtime_error naming the path when no name is free or the folder is not writable.
   */
  explicit ExclusiveFile(const std::string& path, int max_suffix = 9999);
  ~ExclusiveFile();
  ExclusiveFile(const ExclusiveFile&) = delete;
  ExclusiveFile& operator=(const ExclusiveFile&) = delete;

  /** @brief The name actually created. */
  const std::string& path() const { return path_; }
  /** @brief Writes all of `text`; throws std::runtime_error on a short write. */
  void write(const std::string& text);
  /** @brief Flushes and closes; throws on an error; a second call does nothing. */
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace moesim::kernels
