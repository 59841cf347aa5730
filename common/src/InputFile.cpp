#include "moesim/common/InputFile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "moesim/common/Error.hpp"
#include "moesim/common/Limits.hpp"

namespace moesim {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kSpecLimit = 16 * kMiB;
constexpr std::size_t kDataLimit = 512 * kMiB;
// The override itself is bounded: beyond 64 GiB no input fits in memory on any machine moesim targets.
constexpr std::size_t kLargestOverrideMiB = 64 * 1024;

std::string file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib_text(std::size_t bytes) {
  return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::size_t input_limit_bytes(InputKind kind) {
  const std::uint64_t fallback = (kind == InputKind::SPEC ? kSpecLimit : kDataLimit) / kMiB;
  return static_cast<std::size_t>(limit_from_env("MOESIM_MAX_INPUT_MB", fallback, kLargestOverrideMiB)) *
         kMiB;
}

std::string read_input_file(const std::string& path, InputKind kind) {
  const std::size_t limit = input_limit_bytes(kind);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below then refuses it.
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    throw ConfigError(path, "", std::string("cannot be opened for reading: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    throw ConfigError(path, "", std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw ConfigError(path, "", "is " + file_type(info.st_mode) + ", not a regular file");
  const auto size = static_cast<std::size_t>(info.st_size);
  const std::string limit_text = "the " + mib_text(limit) + " limit for " +
                                 (kind == InputKind::SPEC ? "descriptions" : "measurement files") +
                                 " (docs/limits.md; MOESIM_MAX_INPUT_MB raises it)";
  if (size > limit) throw ConfigError(path, "", "is " + mib_text(size) + ", more than " + limit_text);
  std::string text(size, '\0');
  std::size_t used = 0;
  // Read one byte past the size seen: a file that grows while it is read must still stop at the limit.
  text.resize(size + 1);
  for (;;) {
    const ssize_t got = ::read(fd.get(), text.data() + used, text.size() - used);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ConfigError(path, "", std::string("cannot be read: ") + std::strerror(errno));
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
    if (used == text.size()) {
      if (used > limit) throw ConfigError(path, "", "grew past " + limit_text + " while it was read");
      text.resize(std::min(limit + 1, text.size() * 2));
    }
  }
  text.resize(used);
  return text;
}

}  // namespace moesim
