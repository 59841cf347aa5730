#include "moesim/kernels/ExclusiveFile.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace moesim::kernels {

ExclusiveFile::ExclusiveFile(const std::string& path, int max_suffix) {
  for (int suffix = 0; suffix <= max_suffix; ++suffix) {
    const std::string candidate = suffix == 0 ? path : path + "." + std::to_string(suffix);
    file_ = std::fopen(candidate.c_str(), "wx");
    if (file_ != nullptr) {
      path_ = candidate;
      return;
    }
    if (errno != EEXIST) {
      throw std::runtime_error("cannot create " + candidate + ": " + std::strerror(errno));
    }
  }
  throw std::runtime_error("cannot create " + path + ": " + path + " .. " + path + "." +
                           std::to_string(max_suffix) + " all exist");
}

ExclusiveFile::~ExclusiveFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void ExclusiveFile::write(const std::string& text) {
  if (file_ == nullptr) throw std::runtime_error("write to closed file " + path_);
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw std::runtime_error("short write to " + path_ + ": " + std::strerror(errno));
  }
}

void ExclusiveFile::close() {
  if (file_ == nullptr) return;
  const int status = std::fclose(file_);
  file_ = nullptr;
  if (status != 0) throw std::runtime_error("cannot close " + path_ + ": " + std::strerror(errno));
}

}  // namespace moesim::kernels
