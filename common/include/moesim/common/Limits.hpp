#pragma once
/** @file Limits a user may raise through the environment (docs/limits.md lists them). */
#include <cstdint>

namespace moesim {

/**
 * @brief The limit the environment variable `name` sets (a whole number in [1, maximum]), or `fallback`
 * when it is unset or empty. @throws ConfigError naming the variable when its value is not such a number.
 */
std::uint64_t limit_from_env(const char* name, std::uint64_t fallback, std::uint64_t maximum);

}  // namespace moesim
