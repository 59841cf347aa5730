#pragma once
/** @file MOE_CHECK: invariant checks that stay on in release builds. */
#include <sstream>
#include <string>

#include "moesim/common/Error.hpp"

namespace moesim::detail {
/** @brief Collects a streamed message and throws InternalError when destroyed at the end of the statement. */
class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line) {
    stream_ << file << ":" << line << ": check failed: " << condition << ": ";
  }
  [[noreturn]] ~CheckFailure() noexcept(false) { throw InternalError(stream_.str()); }
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};
}  // namespace moesim::detail

/** @brief `MOE_CHECK(cond) << "context";` throws moesim::InternalError when cond is false. */
#define MOE_CHECK(condition) \
  if (condition) {           \
  } else                     \
    ::moesim::detail::CheckFailure(#condition, __FILE__, __LINE__)
