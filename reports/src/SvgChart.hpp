#pragma once
// Small SVG helpers shared by the report pages: escaping, category colours, sweep line charts.
#include <optional>
#include <string>

#include "moesim/reports/HtmlReport.hpp"

namespace moesim::reports {

std::string escape_xml(const std::string& text);
/** @brief A fixed colour per breakdown category, so every page and schedule reads the same. */
std::string category_color(const std::string& category);
/** @brief A time axis under a plot from x0 to x1 at height y: "0" at its left end, the span at its right. */
std::string time_axis_svg(int x0, int x1, int y, double span_ms);
/** @brief True for metrics where larger is better (speedup, overlap, tokens/s, MFU). */
bool higher_is_better(const std::string& metric);
/** @brief The successful point with the best metric value, if any. */
std::optional<SweepPoint> best_point(const SweepTable& sweep);
/** @brief Best-configuration note, one line chart per axis (a line per schedule), and the table of points. */
std::string sweep_html(const SweepTable& sweep);

}  // namespace moesim::reports
