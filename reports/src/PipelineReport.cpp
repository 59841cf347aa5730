// The report's page of a whole step: each pipeline stage's micro-batch chunks on one timeline, and where its
// step went idle (the bubble) or waited on communication.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "SvgChart.hpp"
#include "moesim/reports/HtmlReport.hpp"
#include "moesim/schedules/StepTime.hpp"

namespace moesim::reports {

namespace {

using schedules::SimulationResult;

/** A stretch of one rank's compute serving one micro-batch in one direction. */
struct ChunkBar {
  int micro_batch = 0;
  bool backward = false;
  sim::TimeNs begin = 0, end = 0;
};

/**
 * Rank `rank`'s compute kernels in start order, each direction apart, consecutive kernels of one micro-batch
 * joined: a forward and a backward chunk run as an overlapped pair show as two bars over the same time.
 */
std::vector<ChunkBar> chunk_bars(const SimulationResult& r, int rank) {
  std::vector<std::size_t> kernels;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const sim::Op& op = ops[i];
    if (op.rank == rank && op.kind == sim::OpKind::KERNEL && op.origin.micro_batch >= 0) kernels.push_back(i);
  }
  std::stable_sort(kernels.begin(), kernels.end(),
                   [&](std::size_t a, std::size_t b) { return r.run.ops[a].start < r.run.ops[b].start; });
  std::vector<ChunkBar> bars;
  for (const bool backward : {false, true}) {
    const std::size_t first = bars.size();
    for (std::size_t i : kernels) {
      const sim::Op& op = ops[i];
      if (op.origin.backward != backward) continue;
      const sim::OpTiming& t = r.run.ops[i];
      if (bars.size() > first && bars.back().micro_batch == op.origin.micro_batch) {
        bars.back().end = std::max(bars.back().end, t.end);
      } else {
        bars.push_back({op.origin.micro_batch, backward, t.start, t.end});
      }
    }
  }
  return bars;
}

/** The first simulated rank of each stage of replica 0 (stage-major layout: stage s holds s·ep...). */
std::vector<schedules::RankStepTime> stage_ranks(const SimulationResult& r) {
  std::vector<schedules::RankStepTime> stages;
  const int ep = r.scenario.parallel.ep, pp = r.scenario.parallel.pp;
  for (const auto& time : schedules::step_time_by_rank(r)) {
    if (time.rank % ep == 0 && time.rank < ep * pp) stages.push_back(time);
  }
  return stages;
}

std::string timeline_svg(const SimulationResult& r, const std::vector<schedules::RankStepTime>& stages) {
  const int row_h = 14, lane_h = 2 * row_h + 6, label_w = 90, plot_w = 1000, top = 10;
  const double span = static_cast<double>(std::max<sim::TimeNs>(r.run.makespan_ns, 1));
  const int height = top + static_cast<int>(stages.size()) * lane_h + 24;
  std::ostringstream svg;
  svg << fmt::format(
      R"(<svg class="pipeline" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img">)",
      label_w + plot_w + 10, height);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const int y = top + static_cast<int>(s) * lane_h;
    svg << fmt::format(R"(<g class="stage" data-stage="{}" data-rank="{}">)", s, stages[s].rank);
    svg << fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" class="lane-bg"/>)", label_w, y, plot_w,
                       2 * row_h);
    svg << fmt::format(R"(<text x="4" y="{}" class="lane-label">stage {} (rank {})</text>)", y + row_h + 4, s,
                       stages[s].rank);
    for (const ChunkBar& bar : chunk_bars(r, stages[s].rank)) {
      const double x0 = label_w + static_cast<double>(bar.begin) / span * plot_w;
      const double width = std::max(0.5, static_cast<double>(bar.end - bar.begin) / span * plot_w);
      const int by = y + (bar.backward ? row_h : 0);
      const char* letter = bar.backward ? "B" : "F";
      svg << fmt::format(
          R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}{} ({:.3f} ms)</title></rect>)",
          x0, by + 1, width, row_h - 2, bar.backward ? "#F58518" : "#4C78A8", letter, bar.micro_batch,
          static_cast<double>(bar.end - bar.begin) / 1e6);
      if (width > 16) {
        svg << fmt::format(R"(<text x="{:.1f}" y="{}" class="axis" fill="#fff">{}{}</text>)", x0 + 2,
                           by + row_h - 3, letter, bar.micro_batch);
      }
    }
    svg << "</g>";
  }
  svg << time_axis_svg(label_w, label_w + plot_w, height - 6, span / 1e6) << "</svg>";
  return svg.str();
}

}  // namespace

std::string pipeline_html(const SimulationResult& r) {
  if (r.figure_group("step") == nullptr) return "";
  const auto stages = stage_ranks(r);
  const double step_ms = static_cast<double>(r.run.makespan_ns) / 1e6;
  using schedules::StepComm;
  auto exposed = [](const schedules::RankStepTime& t, StepComm kind) {
    return t.exposed_ms[static_cast<std::size_t>(kind)];
  };
  std::ostringstream h;
  h << fmt::format(
      "<p>{} over {} stages, {} micro-batches: each stage's compute per micro-batch, forward (F, upper row) "
      "and backward (B, lower row). Bubble: share of the {:.3f} ms step the stage neither computes nor "
      "communicates; exposed: communication not under the stage's compute.</p>",
      escape_xml(r.scenario.pp_schedule), r.scenario.parallel.pp, r.scenario.workload.micro_batches, step_ms);
  h << timeline_svg(r, stages);
  h << "<table class=\"pipeline-stages\"><tr><th>stage</th><th>rank</th><th>bubble (%)</th><th>exposed "
       "all-to-all (ms)</th><th>exposed TP (ms)</th><th>exposed p2p (ms)</th><th>exposed data-parallel "
       "(ms)</th></tr>";
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto& t = stages[s];
    const double bubble = step_ms > 0 ? 100.0 * t.idle_ms / step_ms : 0;
    h << fmt::format(
        "<tr data-stage=\"{}\" "
        "data-bubble-pct=\"{:.3f}\"><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.3f}</td>"
        "<td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td></tr>",
        s, bubble, s, t.rank, bubble, exposed(t, StepComm::ALL_TO_ALL), exposed(t, StepComm::TENSOR),
        exposed(t, StepComm::PIPELINE), exposed(t, StepComm::DATA));
  }
  h << "</table>";
  return h.str();
}

}  // namespace moesim::reports
