#pragma once
// Case-insensitive name tests shared by the trace readers (kernel names, module class names).
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>

namespace moesim::traces::detail {

inline std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

/** @brief Whether `text` holds any of `words` (both already lower-case). */
inline bool contains_any(const std::string& text, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return text.find(w) != std::string::npos; });
}

}  // namespace moesim::traces::detail
