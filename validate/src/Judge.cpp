#include "moesim/validate/Judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace moesim::validate {

namespace {

double round_to(double v, double unit) {
  return std::round(v / unit) * unit;
}

/** A --json row: {source, scenario, metric, published_or_measured, predicted, error_pct}. */
nlohmann::json row_json(const ValidationRow& r, double value_unit) {
  return {{"source", r.source},
          {"scenario", r.scenario},
          {"metric", r.metric},
          {"published_or_measured", value_unit > 0 ? round_to(r.published, value_unit) : r.published},
          {"predicted", round_to(r.predicted, 1e-4)},
          {"error_pct", round_to(r.error_pct(), 0.01)}};
}

nlohmann::json rows_json(const std::vector<ValidationRow>& rows, double value_unit) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) out.push_back(row_json(r, value_unit));
  return out;
}

/** A measured comparison as a row (its status and tolerance are the judge's, not the row's). */
ValidationRow measured_row(std::string source, std::string label, std::string metric, double measured,
                           double predicted) {
  ValidationRow row;
  row.source = std::move(source);
  row.scenario = std::move(label);
  row.metric = std::move(metric);
  row.published = measured;
  row.predicted = predicted;
  return row;
}

/** Rows of one measured file set: stack time of every record, FarSkip speedup where a regular exists. */
std::vector<ValidationRow> measured_rows(const std::vector<MeasuredComparison>& cs) {
  std::vector<ValidationRow> rows;
  for (const auto& c : cs) {
    const std::string source = "measured " + c.run.device;
    rows.push_back(measured_row(source, c.run.label(), "stack_ms", c.run.stack_ms, c.predicted_ms));
    if (c.predicted_speedup && c.run.speedup_vs_regular)
      rows.push_back(
          measured_row(source, c.run.label(), "speedup", *c.run.speedup_vs_regular, *c.predicted_speedup));
  }
  return rows;
}

/** The step named `name` in `steps`, or nullptr. */
const OpProfileStep* find_step(const std::vector<OpProfileStep>& steps, const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const auto& s) { return s.step == name; });
  return it == steps.end() ? nullptr : &*it;
}

/** --steps rows: every op-profile step's GPU time, measured and predicted. */
std::vector<ValidationRow> step_rows(const std::vector<MeasuredComparison>& cs) {
  std::vector<ValidationRow> rows;
  for (const auto& c : cs) {
    for (const auto& m : c.run.op_profile) {
      const OpProfileStep* p = find_step(c.predicted_op_profile, m.step);
      rows.push_back(measured_row("measured " + c.run.device + " op profile", c.run.label(),
                                  "step " + m.step + " gpu_ms", m.gpu_ms, p ? p->gpu_ms : 0.0));
    }
  }
  return rows;
}

/** One table per record with an op profile: the runner's steps, then steps only the simulation has. */
void print_steps(std::ostream& out, const std::vector<MeasuredComparison>& cs) {
  bool any = false;
  for (const auto& c : cs) {
    if (c.run.op_profile.empty()) continue;
    any = true;
    out << fmt::format("# op profile of {} (rank {}, {}{}): ms over the stack\n", c.run.label(),
                       c.run.op_profile_rank, c.run.file, c.run.pointer);
    out << fmt::format("#   {:<20} {:>5} {:>10} {:>10} {:>8} {:>10} {:>10}\n", "step", "count", "gpu meas.",
                       "gpu pred.", "diff", "host meas.", "host pred.");
    double measured_sum = 0, predicted_sum = 0;
    auto line = [&out](const std::string& step, int count, const std::string& gpu_measured,
                       double gpu_predicted, const std::string& diff, const std::string& host_measured,
                       double host_predicted) {
      out << fmt::format("    {:<20} {:>5} {:>10} {:>10.3f} {:>8} {:>10} {:>10.3f}\n", step, count,
                         gpu_measured, gpu_predicted, diff, host_measured, host_predicted);
    };
    for (const auto& m : c.run.op_profile) {
      const OpProfileStep* p = find_step(c.predicted_op_profile, m.step);
      const double gpu = p ? p->gpu_ms : 0.0, host = p ? p->host_ms : 0.0;
      line(m.step, m.count, fmt::format("{:.3f}", m.gpu_ms), gpu, fmt::format("{:+.3f}", gpu - m.gpu_ms),
           fmt::format("{:.3f}", m.host_ms), host);
      measured_sum += m.gpu_ms;
      predicted_sum += gpu;
    }
    for (const auto& p : c.predicted_op_profile) {
      if (find_step(c.run.op_profile, p.step)) continue;  // printed with the measured steps
      line(p.step, p.count, "-", p.gpu_ms, "-", "-", p.host_ms);
      predicted_sum += p.gpu_ms;
    }
    out << fmt::format("#   {:<20} {:>5} {:>10.3f} {:>10.3f} {:>+8.3f}\n", "sum", "", measured_sum,
                       predicted_sum, predicted_sum - measured_sum);
  }
  if (!any) out << "# --steps: no record has an op profile (layer_runner --op-profile on)\n";
}

bool time_over(double error_pct, const JudgeOptions& o) {
  return o.time_tolerance_pct > 0 && std::abs(error_pct) > o.time_tolerance_pct;
}

bool speedup_over(const std::optional<double>& measured, const std::optional<double>& predicted,
                  const JudgeOptions& o) {
  return o.speedup_tolerance > 0 && measured && predicted &&
         std::abs(*predicted - *measured) > o.speedup_tolerance;
}

bool record_over(const MeasuredComparison& c, const JudgeOptions& o) {
  return time_over(c.error_pct(), o) || speedup_over(c.run.speedup_vs_regular, c.predicted_speedup, o);
}

bool config_over(const MeasuredConfigSummary& s, const JudgeOptions& o) {
  return time_over(s.error_pct(), o) || speedup_over(s.speedup_median, s.predicted_speedup_median, o);
}

/** --judge configs adds these to the per-record rows; "runs" tells them apart. */
nlohmann::json config_rows(const std::vector<MeasuredConfigSummary>& configs) {
  nlohmann::json out = nlohmann::json::array();
  auto add = [&](const MeasuredConfigSummary& s, const std::string& metric, double measured,
                 double predicted) {
    nlohmann::json row =
        row_json(measured_row("measured " + s.device, s.label, metric, measured, predicted), 1e-4);
    row["runs"] = s.runs;
    out.push_back(std::move(row));
  };
  for (const auto& s : configs) {
    add(s, "stack_ms_median", s.measured_ms_median, s.predicted_ms);
    if (s.speedup_median) add(s, "speedup_median", *s.speedup_median, *s.predicted_speedup_median);
  }
  return out;
}

/** Returns the sum of |time error| over the records. */
double print_records(std::ostream& out, const std::vector<MeasuredComparison>& cs, const JudgeOptions& o) {
  out << fmt::format("# {:<58} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7} {:>7}  {}\n", "config (layer runner)",
                     "measured", "predicted", "error", "speedup", "speedup", "overlap", "overlap", "profile");
  out << fmt::format("# {:<58} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7} {:>7}\n", "", "(ms)", "(ms)", "(%)",
                     "meas.", "pred.", "meas.%", "pred.%");
  double sum_abs = 0;
  for (const auto& c : cs) {
    const bool with_speedup = c.predicted_speedup && c.run.speedup_vs_regular;
    out << fmt::format("  {:<58} {:>9.3f} {:>9.3f} {:>+7.1f} {:>8} {:>8} {:>7.1f} {:>7.1f}  {}{}\n",
                       c.run.label(), c.run.stack_ms, c.predicted_ms, c.error_pct(),
                       with_speedup ? fmt::format("{:.3f}", *c.run.speedup_vs_regular) : "-",
                       with_speedup ? fmt::format("{:.3f}", *c.predicted_speedup) : "-", c.run.overlap_pct,
                       c.predicted_overlap_pct, c.hw, record_over(c, o) ? "  << over" : "");
    sum_abs += std::abs(c.error_pct());
  }
  return sum_abs;
}

/** Returns the sum of |time error| of the medians. */
double print_configs(std::ostream& out, const std::vector<MeasuredConfigSummary>& configs,
                     const JudgeOptions& o) {
  out << "# per config: median over repeated runs\n";
  out << fmt::format("# {:<58} {:>4} {:>9} {:>17} {:>9} {:>7} {:>8} {:>13} {:>8}  {}\n",
                     "config (layer runner)", "runs", "measured", "measured", "predicted", "error", "speedup",
                     "speedup", "speedup", "profile");
  out << fmt::format("# {:<58} {:>4} {:>9} {:>17} {:>9} {:>7} {:>8} {:>13} {:>8}\n", "", "", "med. (ms)",
                     "[min-max] (ms)", "(ms)", "(%)", "meas.med", "[min-max]", "pred.");
  double sum_abs = 0;
  for (const auto& s : configs) {
    const bool with_speedup = s.speedup_median.has_value();
    out << fmt::format("  {:<58} {:>4} {:>9.3f} {:>17} {:>9.3f} {:>+7.1f} {:>8} {:>13} {:>8}  {}{}\n",
                       s.label, s.runs, s.measured_ms_median,
                       fmt::format("[{:.3f}-{:.3f}]", s.measured_ms_min, s.measured_ms_max), s.predicted_ms,
                       s.error_pct(), with_speedup ? fmt::format("{:.3f}", *s.speedup_median) : "-",
                       with_speedup ? fmt::format("[{:.3f}-{:.3f}]", *s.speedup_min, *s.speedup_max) : "-",
                       with_speedup ? fmt::format("{:.3f}", *s.predicted_speedup_median) : "-", s.hw,
                       config_over(s, o) ? "  << over" : "");
    sum_abs += std::abs(s.error_pct());
  }
  return sum_abs;
}

double mean_of(double sum, std::size_t n) {
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

/** A record or config is over when its time or its speedup is; it counts once either way. */
}  // namespace

nlohmann::json measured_rows_json(const std::vector<MeasuredComparison>& cs, const JudgeOptions& o) {
  std::vector<ValidationRow> rows = measured_rows(cs);
  if (o.steps) {
    std::vector<ValidationRow> steps = step_rows(cs);
    rows.insert(rows.end(), steps.begin(), steps.end());
  }
  nlohmann::json out = rows_json(rows, 1e-4);
  if (o.by_config) {
    for (auto& row : config_rows(summarize_by_config(cs))) out.push_back(std::move(row));
  }
  return out;
}

nlohmann::json published_rows_json(const std::vector<ValidationRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = row_json(r, 0);
    row["status"] = to_string(r.status);
    if (r.holds.empty()) {
      row["tolerance_pct"] = r.tolerance_pct;
    } else {
      row["holds"] = r.holds;
    }
    if (r.bound) {
      row["bound"] = {{r.bound->upper ? "upper" : "lower", round_to(r.bound->value, 1e-4)},
                      {"arithmetic", r.bound->arithmetic},
                      {"why", r.bound->why}};
    }
    out.push_back(std::move(row));
  }
  return out;
}

int measured_failures(const std::vector<MeasuredComparison>& cs, const JudgeOptions& o) {
  int over = 0;
  if (o.by_config) {
    for (const auto& s : summarize_by_config(cs)) over += config_over(s, o) ? 1 : 0;
  } else {
    for (const auto& c : cs) over += record_over(c, o) ? 1 : 0;
  }
  return over;
}

void print_measured(std::ostream& out, const std::vector<MeasuredComparison>& cs, const JudgeOptions& o) {
  const bool by_config = o.by_config;
  int records_over = 0, configs_over = 0;
  for (const auto& c : cs) records_over += record_over(c, o) ? 1 : 0;
  std::vector<MeasuredConfigSummary> configs;
  if (by_config) configs = summarize_by_config(cs);
  for (const auto& s : configs) configs_over += config_over(s, o) ? 1 : 0;
  const double record_error = mean_of(print_records(out, cs, o), cs.size());
  const bool judged = o.time_tolerance_pct > 0 || o.speedup_tolerance > 0;
  double config_error = 0;
  if (by_config) config_error = mean_of(print_configs(out, configs, o), configs.size());
  if (o.steps) print_steps(out, cs);
  if (by_config) {
    out << fmt::format(
        "# {} records in {} configs, mean |time error| {:.1f}% (per record) / {:.1f}% (per config median)",
        cs.size(), configs.size(), record_error, config_error);
    if (judged) {
      out << fmt::format(", {} records and {} configs over the tolerances (time {:.1f}%, speedup {:.3f}): {}",
                         records_over, configs_over, o.time_tolerance_pct, o.speedup_tolerance,
                         configs_over ? "FAIL" : "PASS");
    }
  } else {
    out << fmt::format("# {} records, mean |time error| {:.1f}%", cs.size(), record_error);
    if (judged) {
      out << fmt::format(", {} over the tolerances (time {:.1f}%, speedup {:.3f}): {}", records_over,
                         o.time_tolerance_pct, o.speedup_tolerance, records_over ? "FAIL" : "PASS");
    }
  }
  out << "\n";
}

int published_failures(const std::vector<ValidationRow>& rows, double tolerance_pct) {
  if (tolerance_pct <= 0) return 0;
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.status == RowStatus::OFF; }));
}

void print_published(std::ostream& out, const std::vector<ValidationRow>& rows, double tolerance_pct) {
  out << fmt::format("# {:<22} {:<48} {:<22} {:>10} {:>10} {:>8} {:>5}  {}\n", "source", "scenario", "metric",
                     "published", "predicted", "error", "tol.", "status");
  out << fmt::format("# {:<22} {:<48} {:<22} {:>10} {:>10} {:>8} {:>5}\n", "", "", "", "", "", "(%)", "(%)");
  int count[3] = {0, 0, 0};
  for (const auto& r : rows) {
    ++count[static_cast<int>(r.status)];
    // A claim row prints its relation where a figure row prints its error and tolerance.
    const std::string error = r.holds.empty()
                                  ? fmt::format("{:>+8.1f} {:>5.0f}", r.error_pct(), r.tolerance_pct)
                                  : fmt::format("{:>8} {:>5}", "pred " + r.holds, "pub");
    out << fmt::format("  {:<22} {:<48} {:<22} {:>10.3f} {:>10.3f} {}  {}\n", r.source, r.scenario, r.metric,
                       r.published, r.predicted, error, to_string(r.status));
    if (r.bound) {
      const RowBound& b = *r.bound;
      const bool beyond = b.upper ? r.published > b.value : r.published < b.value;
      out << fmt::format("#   bound: {} {:.4g} = {}; published {:.4g} {} ({})\n",
                         b.upper ? "at most" : "at least", b.value, b.arithmetic, r.published,
                         beyond ? (b.upper ? "lies above it" : "lies below it") : "is within it", b.why);
    }
  }
  out << fmt::format(
      "# {} rows: {} reproduced, {} bounded, {} off (figure rows within their tolerance, {:.0f}% "
      "unless the row sets one; claim rows when they hold)",
      rows.size(), count[0], count[1], count[2],
      tolerance_pct > 0 ? tolerance_pct : kDefaultPublishedTolerancePct);
  if (tolerance_pct > 0) out << (count[2] > 0 ? ": FAIL" : ": PASS");
  out << "\n";
}

}  // namespace moesim::validate
