#include "moesim/reports/HtmlReport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "ResultLabel.hpp"
#include "SvgChart.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/OutputFile.hpp"
#include "moesim/reports/ChromeTrace.hpp"
#include "moesim/reports/ResultJson.hpp"

namespace moesim::reports {

namespace {

using schedules::SimulationResult;

std::string label_of(const SimulationResult& r) {
  return result_label(r, " ");
}

/** The middle MoE layer of the forward pass, and the time window its ops span. */
struct Window {
  int layer = -1;
  sim::TimeNs begin = 0, end = 0;
};

Window layer_window(const SimulationResult& r) {
  std::vector<int> moe;
  for (int l = 0; l < r.layers; ++l) {
    if (r.scenario.model.is_moe_layer(l)) moe.push_back(l);
  }
  Window w;
  w.layer = moe.empty() ? r.layers / 2 : moe[moe.size() / 2];
  bool first = true;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank != r.program->simulated_ranks().front() || ops[i].origin.layer != w.layer ||
        ops[i].origin.backward || ops[i].kind == sim::OpKind::HOST) {
      continue;
    }
    const auto& t = r.run.ops[i];
    w.begin = first ? t.start : std::min(w.begin, t.start);
    w.end = first ? t.end : std::max(w.end, t.end);
    first = false;
  }
  if (first) w.end = r.run.makespan_ns;
  return w;
}

}  // namespace

std::string gantt_svg(const SimulationResult& r, int max_ranks) {
  const Window w = layer_window(r);
  const auto& program = *r.program;
  std::vector<int> ranks(
      program.simulated_ranks().begin(),
      program.simulated_ranks().begin() +
          std::min<std::ptrdiff_t>(max_ranks, static_cast<std::ptrdiff_t>(program.simulated_ranks().size())));
  const double span = static_cast<double>(std::max<sim::TimeNs>(w.end - w.begin, 1));
  const int lane_h = 22, label_w = 150, plot_w = 900, top = 24;
  struct Lane {
    int rank;
    int stream;  // -1: host thread
    std::string name;
  };
  std::vector<Lane> lanes;
  for (int rank : ranks) {
    lanes.push_back({rank, -1, "host"});
    const auto& streams = program.streams(rank);
    for (std::size_t s = 0; s < streams.size(); ++s) lanes.push_back({rank, static_cast<int>(s), streams[s]});
  }
  const int height = top + static_cast<int>(lanes.size()) * lane_h + 30;
  std::ostringstream svg;
  svg << fmt::format(
      R"(<svg class="gantt" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img">)",
      label_w + plot_w + 10, height);
  svg << fmt::format(
      R"(<text x="{}" y="14" class="caption">layer {} (forward), {:.3f} ms window; faded: neighbouring layers</text>)",
      label_w, w.layer, span / 1e6);
  for (std::size_t li = 0; li < lanes.size(); ++li) {
    const Lane& lane = lanes[li];
    const int y = top + static_cast<int>(li) * lane_h;
    svg << fmt::format(R"(<g class="lane" data-rank="{}" data-stream="{}">)", lane.rank,
                       escape_xml(lane.name));
    svg << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" class="lane-bg"/>)", label_w, y, plot_w,
                       lane_h - 2);
    svg << fmt::format(R"(<text x="4" y="{}" class="lane-label">rank {} {}</text>)", y + 15, lane.rank,
                       escape_xml(lane.name));
    for (std::size_t i = 0; i < program.ops().size(); ++i) {
      const auto& op = program.ops()[i];
      if (op.rank != lane.rank) continue;
      const bool host = op.kind == sim::OpKind::HOST;
      if (lane.stream >= 0 && (host || op.stream != lane.stream)) continue;
      const auto& t = r.run.ops[i];
      sim::TimeNs b = t.start, e = t.end;
      std::string category = op.category;
      if (lane.stream < 0) {  // the host lane shows launches and syncs
        b = t.launch_begin;
        e = t.launched;
        if (!host) category = "launch";
      }
      if (e <= w.begin || b >= w.end || e <= b) continue;
      if (op.is_comm() && lane.stream >= 0 && t.data_start > b && t.data_start < w.end) {
        // The member's kernel is up but its peers are not: draw that wait pale and say so.
        double wx0 = label_w + (std::max(b, w.begin) - w.begin) / span * plot_w;
        double wx1 = label_w + (std::min(t.data_start, w.end) - w.begin) / span * plot_w;
        if (wx1 > wx0) {
          svg << fmt::format(
              R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}" opacity="0.2"><title>{} waiting for peers ({:.1f} us)</title></rect>)",
              wx0, y + 1, wx1 - wx0, lane_h - 4, category_color(category), escape_xml(op.name),
              static_cast<double>(t.data_start - b) / 1e3);
        }
        b = std::max(b, t.data_start);
      }
      double x0 = label_w + (std::max(b, w.begin) - w.begin) / span * plot_w;
      double x1 = label_w + (std::min(e, w.end) - w.begin) / span * plot_w;
      const bool own = op.origin.layer == w.layer;
      svg << fmt::format(
          R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}" opacity="{}"><title>{} ({:.1f} us)</title></rect>)",
          x0, y + 1, std::max(0.5, x1 - x0), lane_h - 4, category_color(category), own ? "1" : "0.35",
          escape_xml(op.name), static_cast<double>(e - b) / 1e3);
    }
    svg << "</g>";
  }
  svg << time_axis_svg(label_w, label_w + plot_w, height - 8, span / 1e6) << "</svg>";
  return svg.str();
}

namespace {

std::string breakdown_svg(const std::vector<const SimulationResult*>& results) {
  double longest = 0;
  for (const auto* r : results) longest = std::max(longest, r->step_ms);
  const int bar_h = 26, label_w = 220, plot_w = 680;
  std::ostringstream svg;
  svg << fmt::format(R"(<svg class="breakdown" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}">)",
                     label_w + plot_w + 90, 20 + static_cast<int>(results.size()) * (bar_h + 8) + 24);
  int y = 10;
  for (const auto* r : results) {
    const double hidden = r->comm_ms - r->exposed_comm_ms;
    const double parts[] = {r->compute_ms - hidden, hidden, r->exposed_comm_ms,
                            std::max(0.0, r->step_ms - r->compute_ms - r->exposed_comm_ms)};
    const char* names[] = {"compute only", "compute + hidden comm", "exposed comm", "launch gaps and idle"};
    const char* colors[] = {"#4C78A8", "#72B7B2", "#E45756", "#BAB0AC"};
    svg << fmt::format(R"(<text x="4" y="{}" class="lane-label">{}</text>)", y + 17,
                       escape_xml(label_of(*r)));
    double x = label_w;
    for (int i = 0; i < 4; ++i) {
      double wpx = longest > 0 ? parts[i] / longest * plot_w : 0;
      svg << fmt::format(
          R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}: {:.3f} ms</title></rect>)",
          x, y, std::max(0.0, wpx), bar_h, colors[i], names[i], parts[i]);
      x += wpx;
    }
    svg << fmt::format(R"(<text x="{:.1f}" y="{}" class="axis">{:.2f} ms</text>)", x + 4, y + 17, r->step_ms);
    y += bar_h + 8;
  }
  int lx = label_w;
  const char* names[] = {"compute only", "compute + hidden comm", "exposed comm", "launch gaps and idle"};
  const char* colors[] = {"#4C78A8", "#72B7B2", "#E45756", "#BAB0AC"};
  for (int i = 0; i < 4; ++i) {
    svg << fmt::format(
        R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}" class="axis">{}</text>)",
        lx, y + 4, colors[i], lx + 14, y + 13, names[i]);
    lx += 170;
  }
  svg << "</svg>";
  return svg.str();
}

std::string results_table(const std::vector<const SimulationResult*>& results) {
  const SimulationResult* base = results.size() > 1 ? results.back() : nullptr;
  std::ostringstream h;
  h << "<table><tr><th>schedule</th><th>step (ms)</th><th>layer (ms)</th><th>compute (ms)</th><th>comm "
       "(ms)</th>"
       "<th>exposed comm (ms)</th><th>overlap (%)</th><th>MFU (%)</th><th>tokens/s</th><th>speedup "
       "(x)</th></tr>";
  for (const auto* r : results) {
    h << fmt::format(
        "<tr><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.1f}</td><td>{:.1f}</td><td>{:.4g}</td><td>{}</td></tr>",
        escape_xml(label_of(*r)), r->step_ms, r->layer_ms, r->compute_ms, r->comm_ms, r->exposed_comm_ms,
        r->overlap_pct, r->mfu_pct, r->tokens_per_s,
        base ? fmt::format("{:.3f}", base->step_ms / r->step_ms) : "-");
  }
  h << "</table>";
  return h.str();
}

std::string legend(const std::vector<const SimulationResult*>& results) {
  std::set<std::string> categories = {"launch"};
  for (const auto* r : results) {
    for (const auto& op : r->program->ops()) categories.insert(op.category);
  }
  std::string out = "<p class=\"legend\">";
  for (const auto& c : categories) {
    out += fmt::format(R"(<span><i style="background:{}"></i>{}</span> )", category_color(c), escape_xml(c));
  }
  return out + "</p>";
}

std::string scenario_html(const SimulationResult& r) {
  auto j = scenario_json(r.scenario);
  std::string out = "<table class=\"scenario\">";
  for (auto& [k, v] : j.items()) {
    out += "<tr><th>" + escape_xml(k) + "</th><td>" +
           escape_xml(v.is_string() ? v.get<std::string>() : v.dump()) + "</td></tr>";
  }
  out += fmt::format("<tr><th>simulation</th><td>{}</td></tr></table>",
                     r.symmetric ? "symmetric fast path: one rank stands for all" : "every rank simulated");
  return out;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file_atomically(path.string(), [&](std::ostream& out) { out << text; });
}

std::string markdown(const std::vector<const SimulationResult*>& results, const SweepTable* sweep) {
  std::ostringstream md;
  if (!results.empty()) {
    const auto& s = results.front()->scenario;
    md << fmt::format("**moesim**: {} on {}× {} ({}), {}, EP={}, {} tokens/rank, {} layers\n\n", s.model.name,
                      results.front()->world, s.hw.gpu.name, s.hw.name,
                      schedules::to_string(s.workload.phase), s.parallel.ep, s.workload.tokens,
                      results.front()->layers);
    md << "| schedule | step (ms) | exposed comm (ms) | overlap (%) | speedup |\n|---|---:|---:|---:|---:|\n";
    const auto* base = results.size() > 1 ? results.back() : nullptr;
    for (const auto* r : results) {
      md << fmt::format("| {} | {:.3f} | {:.3f} | {:.1f} | {} |\n", label_of(*r), r->step_ms,
                        r->exposed_comm_ms, r->overlap_pct,
                        base ? fmt::format("{:.3f}x", base->step_ms / r->step_ms) : "-");
    }
  }
  if (sweep) {
    auto best = best_point(*sweep);
    md << fmt::format("\nSweep `{}`: {} points, best {} = {}", sweep->name, sweep->points.size(),
                      sweep->metric, best ? fmt::format("{:.4g}", best->metrics.at(sweep->metric)) : "n/a");
    if (best) {
      md << " at";
      for (const auto& [k, v] : best->params) md << " " << k << "=" << v;
    }
    md << "\n";
  }
  return md.str();
}

const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}
table.scenario td,table.scenario th{text-align:left}.lane-bg{fill:#f7f7f7}.lane-label{font-size:11px}
.axis{font-size:11px;fill:#555}.caption{font-size:12px;fill:#333}.legend span{margin-right:12px;white-space:nowrap}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}.best{fill:none;stroke:#d00;stroke-width:2}
.note{color:#555})";

}  // namespace

void write_report(const std::string& dir, const std::vector<const SimulationResult*>& results,
                  const SweepTable* sweep) {
  std::filesystem::path root(dir);
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) throw ConfigError(dir, "", "cannot create the report directory: " + ec.message());
  std::ostringstream html;
  html << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>moesim report</title><style>" << kStyle
       << "</style></head><body><h1>moesim overlap report</h1>";
  if (!results.empty()) {
    html << "<h2>Scenario</h2>" << scenario_html(*results.front());
    html << "<h2>Step time, overlap and speedup</h2>" << results_table(results);
    html << "<h2>Where the time goes</h2>" << breakdown_svg(results);
    html << "<h2>One layer, per schedule</h2>" << legend(results);
    for (const auto* r : results) html << "<h3>" << escape_xml(label_of(*r)) << "</h3>" << gantt_svg(*r);
    for (const auto* r : results) {
      const std::string pipeline = pipeline_html(*r);
      if (!pipeline.empty())
        html << "<h2 id=\"pipeline\">The step's pipeline: " << escape_xml(label_of(*r)) << "</h2>"
             << pipeline;
    }
    html << "<p class=\"note\">The full run is in <code>trace.json</code> (open it in ui.perfetto.dev).</p>";
  }
  if (sweep) html << "<h2>Sweep " << escape_xml(sweep->name) << "</h2>" << sweep_html(*sweep);
  html << "</body></html>\n";
  write_file(root / "index.html", html.str());
  write_file(root / "summary.md", markdown(results, sweep));
  if (!results.empty()) {
    write_file_atomically((root / "trace.json").string(),
                          [&](std::ostream& trace) { write_chrome_trace(trace, *results.front()); });
  }
}

}  // namespace moesim::reports
