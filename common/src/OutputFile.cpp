#include "moesim/common/OutputFile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <streambuf>

#include "moesim/common/Error.hpp"

namespace moesim {
namespace {

namespace fs = std::filesystem;

std::string reason(int error) {
  return std::strerror(error);
}

/** A stream buffer over a file descriptor that remembers the first errno a write() failed with. */
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* from = pbase();
    while (error_ == 0 && from < pptr()) {
      const ssize_t wrote = ::write(fd_, from, static_cast<std::size_t>(pptr() - from));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) {
        error_ = wrote < 0 ? errno : EIO;
        break;
      }
      from += wrote;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

/** The file a write to `path` lands in: the target of a symbolic link, so that the link survives. */
fs::path write_target(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    fs::path target = fs::canonical(path, ec);
    if (!ec) return target;
  }
  return fs::path(path);
}

/** A temporary file beside `target`, removed on destruction unless it was handed over. */
class TempFile {
 public:
  explicit TempFile(const fs::path& target) {
    static std::atomic<unsigned> counter{0};
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    name_ = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter.fetch_add(1))))
                .string();
    fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) throw ConfigError(target.string(), "", "cannot be written: " + reason(errno));
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }

  /** Streams `body` into the file and closes it; ConfigError naming `shown` on any write error. */
  void write(const std::function<void(std::ostream&)>& body, const std::string& shown) {
    FdBuffer buffer(fd_);
    std::ostream out(&buffer);
    body(out);
    out.flush();
    int error = buffer.error();
    if (error == 0 && !out) error = EIO;
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && error == 0) error = errno;  // NFS and quotas may report only at close
    if (error != 0) throw ConfigError(shown, "", "could not be written: " + reason(error));
  }
  const std::string& name() const { return name_; }
  void handed_over() { name_.clear(); }

 private:
  std::string name_;
  int fd_ = -1;
};

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return a == b;
  const fs::path cb = fs::weakly_canonical(b, ec);
  if (ec) return a == b;
  return ca == cb;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& body) {
  const fs::path target = write_target(path);
  TempFile temp(target);
  temp.write(body, path);
  if (std::rename(temp.name().c_str(), target.c_str()) != 0)
    throw ConfigError(path, "", "could not be written: " + reason(errno));
  temp.handed_over();
}

std::string write_new_file_atomically(const std::string& path,
                                      const std::function<void(std::ostream&)>& body) {
  TempFile temp{fs::path(path)};
  temp.write(body, path);
  for (int suffix = 0; suffix < 1000; ++suffix) {
    const std::string name = suffix == 0 ? path : path + "." + std::to_string(suffix);
    if (::link(temp.name().c_str(), name.c_str()) == 0)
      return name;  // the temporary file goes on destruction
    if (errno != EEXIST) throw ConfigError(name, "", "cannot be created: " + reason(errno));
  }
  throw ConfigError(path, "", "exists, and so do " + path + ".1 ... .999");
}

void check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty() || path == "-") return;
  auto fail = [&](const std::string& message) {
    throw ConfigError("", flag, "= \"" + path + "\": " + message);
  };
  const fs::path target = write_target(path);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status)) fail("is a directory, not a file");
  if (fs::exists(status) && ::access(target.c_str(), W_OK) != 0)
    fail("exists and cannot be written: " + reason(errno));
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) fail("its directory " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) fail("its directory cannot be written: " + reason(errno));
}

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  auto skipped = [](const NamedPath& p) { return p.path.empty() || p.path == "-"; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (skipped(outputs[i])) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (!skipped(outputs[j]) && same_file(outputs[i].path, outputs[j].path)) {
        throw ConfigError("", outputs[i].flag,
                          "= \"" + outputs[i].path + "\": is also the output of " + outputs[j].flag +
                              " (each output needs its own file)");
      }
    }
    for (const NamedPath& input : inputs) {
      if (!skipped(input) && same_file(outputs[i].path, input.path)) {
        throw ConfigError("", outputs[i].flag,
                          "= \"" + outputs[i].path + "\": is the input of " + input.flag +
                              " (an output must not overwrite an input)");
      }
    }
  }
}

}  // namespace moesim
