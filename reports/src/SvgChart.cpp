#include "SvgChart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace moesim::reports {

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string category_color(const std::string& category) {
  static const std::map<std::string, std::string> colors = {
      {"attention", "#4C78A8"},      {"gate", "#72B7B2"},
      {"permute", "#54A24B"},        {"routed_experts", "#F58518"},
      {"shared_experts", "#EECA3B"}, {"dense_ffn", "#B279A2"},
      {"residual", "#9D755D"},       {"dispatch", "#E45756"},
      {"combine", "#D62728"},        {"dispatch.bwd", "#FF9DA6"},
      {"combine.bwd", "#C51B7D"},    {"attn_allreduce", "#E45756"},
      {"moe_allreduce", "#D62728"},  {"launch", "#BAB0AC"},
      {"host_sync", "#333333"},      {"wait", "#FFFFFF"}};
  auto it = colors.find(category);
  return it != colors.end() ? it->second : "#888888";
}

bool higher_is_better(const std::string& metric) {
  return metric == "speedup" || metric == "overlap_pct" || metric == "tokens_per_s" || metric == "mfu_pct" ||
         metric == "sm_busy_pct";
}

std::optional<SweepPoint> best_sweep_point(const SweepTable& sweep) {
  return best_point(sweep);
}

std::optional<SweepPoint> best_point(const SweepTable& sweep) {
  std::optional<SweepPoint> best;
  for (const auto& p : sweep.points) {
    if (!p.ok || !p.metrics.count(sweep.metric)) continue;
    double v = p.metrics.at(sweep.metric);
    if (!best || (higher_is_better(sweep.metric) ? v > best->metrics.at(sweep.metric)
                                                 : v < best->metrics.at(sweep.metric))) {
      best = p;
    }
  }
  return best;
}

namespace {

std::optional<double> as_number(const std::string& s) {
  try {
    std::size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

const char* kLineColors[] = {"#4C78A8", "#F58518", "#54A24B", "#E45756",
                             "#B279A2", "#72B7B2", "#9D755D", "#EECA3B"};

/** Metric vs one axis: per schedule and axis value, the best value over all other axes. */
std::string axis_chart(const SweepTable& sweep, const std::string& axis,
                       const std::optional<SweepPoint>& best) {
  std::vector<std::string> xs;
  for (const auto& p : sweep.points) {
    if (p.params.count(axis) && std::find(xs.begin(), xs.end(), p.params.at(axis)) == xs.end())
      xs.push_back(p.params.at(axis));
  }
  if (xs.size() < 2) return "";
  const bool numeric =
      std::all_of(xs.begin(), xs.end(), [](const auto& x) { return as_number(x).has_value(); });
  if (numeric)
    std::sort(xs.begin(), xs.end(),
              [](const auto& a, const auto& b) { return *as_number(a) < *as_number(b); });
  std::map<std::string, std::map<std::string, double>> lines;  // schedule -> x -> best y
  for (const auto& p : sweep.points) {
    if (!p.ok || !p.metrics.count(sweep.metric) || !p.params.count(axis)) continue;
    std::string series = p.params.count("schedule") ? p.params.at("schedule") : sweep.metric;
    double v = p.metrics.at(sweep.metric);
    auto& slot = lines[series];
    auto it = slot.find(p.params.at(axis));
    if (it == slot.end() || (higher_is_better(sweep.metric) ? v > it->second : v < it->second))
      slot[p.params.at(axis)] = v;
  }
  double lo = 1e300, hi = -1e300;
  for (const auto& [s, pts] : lines) {
    for (const auto& [x, y] : pts) {
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  }
  if (lines.empty()) return "";
  if (hi <= lo) hi = lo + 1;
  const int w = 520, h = 260, left = 60, bottom = 40, top = 24;
  auto px = [&](std::size_t i) {
    return left + (xs.size() > 1 ? static_cast<double>(i) / (xs.size() - 1) : 0.5) * (w - left - 20);
  };
  auto py = [&](double y) { return top + (1 - (y - lo) / (hi - lo)) * (h - top - bottom); };
  std::ostringstream svg;
  svg << fmt::format(R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}">)", w,
                     h);
  svg << fmt::format(R"(<text x="{}" y="14" class="caption">{} vs {} (best over the other axes)</text>)",
                     left, escape_xml(sweep.metric), escape_xml(axis));
  svg << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999"/>)", left, h - bottom, w - 20,
                     h - bottom);
  svg << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999"/>)", left, top, left, h - bottom);
  svg << fmt::format(
      R"(<text x="4" y="{:.0f}" class="axis">{:.4g}</text><text x="4" y="{:.0f}" class="axis">{:.4g}</text>)",
      py(hi) + 4, hi, py(lo) + 4, lo);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    svg << fmt::format(R"(<text x="{:.0f}" y="{}" class="axis" text-anchor="middle">{}</text>)", px(i),
                       h - bottom + 16, escape_xml(xs[i]));
  }
  int c = 0, legend_y = top + 4;
  for (const auto& [series, pts] : lines) {
    const char* color = kLineColors[c++ % 8];
    std::string path;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto it = pts.find(xs[i]);
      if (it == pts.end()) continue;
      path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", px(i), py(it->second));
      svg << fmt::format(
          R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{} {}={}: {:.4g}</title></circle>)",
          px(i), py(it->second), color, escape_xml(series), escape_xml(axis), escape_xml(xs[i]), it->second);
    }
    svg << fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)", path, color);
    svg << fmt::format(R"(<text x="{}" y="{}" class="axis" style="fill:{}">{}</text>)", w - 140, legend_y,
                       color, escape_xml(series));
    legend_y += 14;
  }
  if (best && best->params.count(axis)) {
    auto at = std::find(xs.begin(), xs.end(), best->params.at(axis));
    svg << fmt::format(
        R"(<circle class="best" cx="{:.1f}" cy="{:.1f}" r="7"><title>best configuration</title></circle>)",
        px(static_cast<std::size_t>(at - xs.begin())), py(best->metrics.at(sweep.metric)));
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace

std::string sweep_html(const SweepTable& sweep) {
  std::ostringstream h;
  auto best = best_point(sweep);
  std::size_t failed = 0;
  for (const auto& p : sweep.points) failed += p.ok ? 0 : 1;
  h << fmt::format("<p>{} points ({} failed); metric <b>{}</b> ({} is better).", sweep.points.size(), failed,
                   escape_xml(sweep.metric), higher_is_better(sweep.metric) ? "higher" : "lower");
  if (best) {
    h << fmt::format(" Best: <b>{:.4g}</b> at", best->metrics.at(sweep.metric));
    for (const auto& [k, v] : best->params) h << " " << escape_xml(k) << "=" << escape_xml(v);
  }
  h << "</p>";
  for (const auto& axis : sweep.axes) h << axis_chart(sweep, axis, best);
  h << "<table><tr>";
  for (const auto& a : sweep.axes) h << "<th>" << escape_xml(a) << "</th>";
  h << "<th>" << escape_xml(sweep.metric) << "</th></tr>";
  for (const auto& p : sweep.points) {
    bool is_best = best && p.params == best->params;
    h << (is_best ? "<tr style=\"font-weight:bold;background:#fee\">" : "<tr>");
    for (const auto& a : sweep.axes)
      h << "<td>" << escape_xml(p.params.count(a) ? p.params.at(a) : "") << "</td>";
    h << "<td>"
      << (p.ok && p.metrics.count(sweep.metric) ? fmt::format("{:.4g}", p.metrics.at(sweep.metric))
                                                : std::string("error"))
      << "</td></tr>";
  }
  h << "</table>";
  return h.str();
}

std::string time_axis_svg(int x0, int x1, int y, double span_ms) {
  return fmt::format(
      R"(<text x="{}" y="{}" class="axis">0</text><text x="{}" y="{}" class="axis" text-anchor="end">{:.3f} ms</text>)",
      x0, y, x1, y, span_ms);
}

}  // namespace moesim::reports
