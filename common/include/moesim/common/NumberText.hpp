#pragma once
/** @file Numbers in messages: as a person would write them, never 309 digits for 1e308. */
#include <cstdio>
#include <string>

namespace moesim {

/** @brief `value` with up to 15 significant digits and no trailing zeros: 0.1, 1e+308, nan, inf. */
inline std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", value);
  return buffer;
}

}  // namespace moesim
