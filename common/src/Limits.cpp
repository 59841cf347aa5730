#include "moesim/common/Limits.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "moesim/common/Error.hpp"

namespace moesim {

std::uint64_t limit_from_env(const char* name, std::uint64_t fallback, std::uint64_t maximum) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  std::uint64_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end || value < 1 || value > maximum) {
    throw ConfigError("", name,
                      "= \"" + std::string(text, std::min<std::size_t>(std::strlen(text), 40)) +
                          "\": expected a whole number in [1, " + std::to_string(maximum) +
                          "] (docs/limits.md)");
  }
  return value;
}

}  // namespace moesim
