#pragma once
/** @file Figures a schedule family adds to a result beside the generic ones (FarSkip's Eq. (9), FlashMoE's).
 */
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace moesim::schedules {

/** @brief One named number (or verdict) of a family's figures. */
struct Figure {
  std::string name;
  std::variant<double, std::int64_t, bool> value;
  bool milliseconds = false;  ///< a time in ms: written rounded to the engine's nanosecond
};

/**
 * @brief A group of figures: a JSON object under `key` and the lines the text summary prints for it.
 * `in_metrics`: the group belongs to the metrics block (so a --compare baseline carries it too);
 * otherwise it sits at the top level of the result record.
 */
struct FigureGroup {
  std::string key;
  bool in_metrics = false;
  std::vector<Figure> values;
  std::vector<std::string> summary;
  /** @brief The value named `name` as a number (a verdict as 0 or 1); nullopt when the group has none. */
  std::optional<double> number(const std::string& name) const;
};

}  // namespace moesim::schedules
