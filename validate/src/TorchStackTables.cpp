#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "moesim/common/Statistics.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

bool speedup_over(const TorchStackComparison& c, double tolerance) {
  return tolerance > 0 && c.measured_speedup && c.predicted_speedup &&
         std::abs(*c.predicted_speedup - *c.measured_speedup) > tolerance;
}

bool over(const TorchStackComparison& c, double time_tolerance_pct, double speedup_tolerance) {
  return (time_tolerance_pct > 0 && std::abs(c.error_pct()) > time_tolerance_pct) ||
         speedup_over(c, speedup_tolerance);
}

std::string speedup_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}", *v) : "-";
}

void print_ops(std::ostream& out, const TorchStackComparison& c) {
  out << fmt::format("#\n# per op (summed over layers): {} ({}), trace {}\n", c.label(), c.impl,
                     c.record.traces.front());
  out << fmt::format("# {:<16} {:<8} {:>8} {:>8} {:>10} {:>10} {:>8} {:>10} {:>10}\n", "op", "pass",
                     "kernels", "(pred)", "GPU ms", "(pred)", "error%", "host ms", "(pred)");
  for (const OpTimes& o : c.ops) {
    const std::string error =
        o.measured_gpu_ms > 0
            ? fmt::format("{:+.1f}", 100 * (o.predicted_gpu_ms - o.measured_gpu_ms) / o.measured_gpu_ms)
            : "-";
    out << fmt::format("  {:<16} {:<8} {:>8} {:>8} {:>10.3f} {:>10.3f} {:>8} {:>10.3f} {:>10.3f}\n", o.op,
                       o.op == kOutsideOps ? "-"
                       : o.backward        ? "backward"
                                           : "forward",
                       o.measured_kernels, o.predicted_kernels, o.measured_gpu_ms, o.predicted_gpu_ms, error,
                       o.measured_host_ms, o.predicted_host_ms);
  }
}

void print_pace_errors(std::ostream& out, const std::vector<TorchStackComparison>& cs) {
  std::string parts;
  for (const PaceErrors& p : errors_by_measured_pace(cs)) {
    if (p.records == 0) continue;
    const char* name = p.pace == MeasuredPace::GPU     ? "GPU-bound (< 0.6)"
                       : p.pace == MeasuredPace::MIXED ? "mixed"
                                                       : "host-bound (>= 0.9)";
    parts += fmt::format("{}{} {} records, median {:.1f}%", parts.empty() ? "" : "; ", name, p.records,
                         p.median_abs_error_pct);
  }
  out << "# |time error| by measured pace (rank 0's issue time over its GPU time): " << parts
      << " (host-bound steps move with the host's speed: --host-probe)\n";
}

}  // namespace

MeasuredPace measured_pace(const traces::TorchStackRecord& record) {
  const double ratio = record.gpu_ms_p50 > 0 ? record.issue_ms_p50 / record.gpu_ms_p50 : 0;
  return ratio >= 0.9 ? MeasuredPace::HOST : ratio >= 0.6 ? MeasuredPace::MIXED : MeasuredPace::GPU;
}

std::vector<PaceErrors> errors_by_measured_pace(const std::vector<TorchStackComparison>& cs) {
  std::vector<PaceErrors> out;
  for (MeasuredPace pace : {MeasuredPace::GPU, MeasuredPace::MIXED, MeasuredPace::HOST}) {
    std::vector<double> errors;
    for (const TorchStackComparison& c : cs)
      if (measured_pace(c.record) == pace) errors.push_back(std::abs(c.error_pct()));
    out.push_back({pace, static_cast<int>(errors.size()), median(errors)});
  }
  return out;
}

int torch_stack_failures(const std::vector<TorchStackComparison>& cs, double time_tolerance_pct,
                         double speedup_tolerance) {
  return static_cast<int>(std::count_if(
      cs.begin(), cs.end(), [&](const auto& c) { return over(c, time_tolerance_pct, speedup_tolerance); }));
}

void print_torch_stacks(std::ostream& out, const std::vector<TorchStackComparison>& cs,
                        double time_tolerance_pct, double speedup_tolerance) {
  out << "# PyTorch stacks (kernels/torch_stacks records): measured step p50 (slowest rank) vs simulated\n";
  out << fmt::format("# {:<58} {:<14} {:>9} {:>17} {:>9} {:>8} {:>8} {:>8}\n", "record", "impl", "measured",
                     "(min-max)", "predicted", "error%", "speedup", "(pred)");
  struct Totals {
    int n = 0, within = 0, speedups = 0;
    double sum_abs = 0, max_abs = 0, sum_speedup = 0, max_speedup = 0;
  };
  std::map<std::string, Totals> totals;
  for (const TorchStackComparison& c : cs) {
    const auto& r = c.record;
    out << fmt::format("  {:<58} {:<14} {:>9.3f} {:>17} {:>9.3f} {:>+8.1f} {:>8} {:>8}{}\n", c.label(),
                       c.impl, r.step_ms_p50, fmt::format("({:.2f}-{:.2f})", r.step_ms_min, r.step_ms_max),
                       c.predicted_ms, c.error_pct(), speedup_text(c.measured_speedup),
                       speedup_text(c.predicted_speedup),
                       over(c, time_tolerance_pct, speedup_tolerance) ? "  OVER" : "");
    for (const std::string& key : {std::string("all"), c.impl + " " + r.style}) {
      Totals& t = totals[key];
      ++t.n;
      t.sum_abs += std::abs(c.error_pct());
      t.max_abs = std::max(t.max_abs, std::abs(c.error_pct()));
      t.within += std::abs(c.error_pct()) <= 10 ? 1 : 0;
      if (c.measured_speedup && c.predicted_speedup) {
        const double d = std::abs(*c.predicted_speedup - *c.measured_speedup);
        ++t.speedups;
        t.sum_speedup += d;
        t.max_speedup = std::max(t.max_speedup, d);
      }
    }
  }
  for (const auto& [key, t] : totals) {
    out << fmt::format(
        "# {}: {} records, |time error| mean {:.1f}% max {:.1f}%, {} within 10%; FarSkip speedup |error| "
        "over {} "
        "pairs mean {:.3f} max {:.3f}\n",
        key, t.n, t.sum_abs / std::max(t.n, 1), t.max_abs, t.within, t.speedups,
        t.sum_speedup / std::max(t.speedups, 1), t.max_speedup);
  }
  if (!cs.empty()) print_pace_errors(out, cs);
  const auto probed = std::count_if(cs.begin(), cs.end(), [](const auto& c) { return c.host_from_probe; });
  if (probed > 0) {
    const auto [slow, fast] = std::minmax_element(
        cs.begin(), cs.end(), [](const auto& a, const auto& b) { return a.host_speed < b.host_speed; });
    out << fmt::format(
        "# host speed from the host probes: {} of {} records, {:.2f}-{:.2f} (the rest at 1: no "
        "probe in the record or the profile)\n",
        probed, cs.size(), slow->host_speed, fast->host_speed);
  }
  for (const TorchStackComparison& c : cs)
    if (!c.ops.empty()) print_ops(out, c);
  if (time_tolerance_pct > 0 || speedup_tolerance > 0)
    out << fmt::format("# {} of {} records over the tolerances\n",
                       torch_stack_failures(cs, time_tolerance_pct, speedup_tolerance), cs.size());
}

nlohmann::json torch_stack_rows_json(const std::vector<TorchStackComparison>& cs) {
  nlohmann::json rows = nlohmann::json::array();
  auto add = [&](const TorchStackComparison& c, const std::string& metric, double measured,
                 double predicted) {
    rows.push_back({{"source", c.record.file},
                    {"scenario", c.label() + " (" + c.impl + ")"},
                    {"metric", metric},
                    {"published_or_measured", measured},
                    {"predicted", predicted},
                    {"error_pct", measured != 0 ? 100 * (predicted - measured) / measured : 0.0}});
  };
  for (const TorchStackComparison& c : cs) {
    add(c, "step_ms", c.record.step_ms_p50, c.predicted_ms);
    if (c.measured_speedup && c.predicted_speedup)
      add(c, "farskip_speedup", *c.measured_speedup, *c.predicted_speedup);
    for (const OpTimes& o : c.ops)
      add(c, "gpu_ms." + o.op + (o.backward ? ".backward" : ".forward"), o.measured_gpu_ms,
          o.predicted_gpu_ms);
  }
  return rows;
}

}  // namespace moesim::validate
