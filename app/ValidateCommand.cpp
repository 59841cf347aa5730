// `moesim validate`: predicted vs published figures (--published) or layer-runner measurements
// (--measured), with error %; --json writes the rows to a file (the table still prints) or, with -, prints
// only the rows. --judge configs judges the median of each config's repeated runs instead of every record,
// since one config's measurements spread between leases by more than the speedup tolerance. --steps adds,
// for records with the runner's op profile, each step's GPU and host time measured and predicted.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/schedules/Measured.hpp"
#include "moesim/schedules/Published.hpp"

namespace moesim::app {

namespace {
struct ValidateOptions {
  bool published = false;
  std::vector<std::string> measured;
  std::string hw;
  double tolerance = 0;
  double speedup_tolerance = 0;
  std::string json_path;
  std::string judge = "records";
  bool steps = false;
};

double round_to(double v, double unit) {
  return std::round(v / unit) * unit;
}

/** A --json row: {source, scenario, metric, published_or_measured, predicted, error_pct}. */
nlohmann::json row_json(const schedules::ValidationRow& r, double value_unit) {
  return {{"source", r.source},
          {"scenario", r.scenario},
          {"metric", r.metric},
          {"published_or_measured", value_unit > 0 ? round_to(r.published, value_unit) : r.published},
          {"predicted", round_to(r.predicted, 1e-4)},
          {"error_pct", round_to(r.error_pct(), 0.01)}};
}

void write_rows(const std::string& path, const std::vector<schedules::ValidationRow>& rows, double value_unit,
                nlohmann::json more = nlohmann::json::array()) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) out.push_back(row_json(r, value_unit));
  for (auto& row : more) out.push_back(std::move(row));
  write_text(path, "validation rows", [&](std::ostream& stream) { stream << out.dump(2) << "\n"; });
}

/** Rows of one measured file set: stack time of every record, FarSkip speedup where a regular exists. */
std::vector<schedules::ValidationRow> measured_rows(const std::vector<schedules::MeasuredComparison>& cs) {
  std::vector<schedules::ValidationRow> rows;
  for (const auto& c : cs) {
    const std::string source = "measured " + c.run.device;
    rows.push_back({source, c.run.label(), "stack_ms", c.run.stack_ms, c.predicted_ms});
    if (c.predicted_speedup && c.run.speedup_vs_regular)
      rows.push_back({source, c.run.label(), "speedup", *c.run.speedup_vs_regular, *c.predicted_speedup});
  }
  return rows;
}

/** The step named `name` in `steps`, or nullptr. */
const schedules::OpProfileStep* find_step(const std::vector<schedules::OpProfileStep>& steps,
                                          const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const auto& s) { return s.step == name; });
  return it == steps.end() ? nullptr : &*it;
}

/** --steps rows: every op-profile step's GPU time, measured and predicted. */
std::vector<schedules::ValidationRow> step_rows(const std::vector<schedules::MeasuredComparison>& cs) {
  std::vector<schedules::ValidationRow> rows;
  for (const auto& c : cs) {
    for (const auto& m : c.run.op_profile) {
      const schedules::OpProfileStep* p = find_step(c.predicted_op_profile, m.step);
      rows.push_back({"measured " + c.run.device + " op profile", c.run.label(), "step " + m.step + " gpu_ms",
                      m.gpu_ms, p ? p->gpu_ms : 0.0});
    }
  }
  return rows;
}

/** One table per record with an op profile: the runner's steps, then steps only the simulation has. */
void print_steps(const std::vector<schedules::MeasuredComparison>& cs) {
  bool any = false;
  for (const auto& c : cs) {
    if (c.run.op_profile.empty()) continue;
    any = true;
    std::cout << fmt::format("# op profile of {} (rank {}, {}{}): ms over the stack\n", c.run.label(),
                             c.run.op_profile_rank, c.run.file, c.run.pointer);
    std::cout << fmt::format("#   {:<20} {:>5} {:>10} {:>10} {:>8} {:>10} {:>10}\n", "step", "count",
                             "gpu meas.", "gpu pred.", "diff", "host meas.", "host pred.");
    double measured_sum = 0, predicted_sum = 0;
    auto line = [](const std::string& step, int count, const std::string& gpu_measured, double gpu_predicted,
                   const std::string& diff, const std::string& host_measured, double host_predicted) {
      std::cout << fmt::format("    {:<20} {:>5} {:>10} {:>10.3f} {:>8} {:>10} {:>10.3f}\n", step, count,
                               gpu_measured, gpu_predicted, diff, host_measured, host_predicted);
    };
    for (const auto& m : c.run.op_profile) {
      const schedules::OpProfileStep* p = find_step(c.predicted_op_profile, m.step);
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
    std::cout << fmt::format("#   {:<20} {:>5} {:>10.3f} {:>10.3f} {:>+8.3f}\n", "sum", "", measured_sum,
                             predicted_sum, predicted_sum - measured_sum);
  }
  if (!any) std::cout << "# --steps: no record has an op profile (layer_runner --op-profile on)\n";
}

bool time_over(double error_pct, const ValidateOptions& o) {
  return o.tolerance > 0 && std::abs(error_pct) > o.tolerance;
}

bool speedup_over(const std::optional<double>& measured, const std::optional<double>& predicted,
                  const ValidateOptions& o) {
  return o.speedup_tolerance > 0 && measured && predicted &&
         std::abs(*predicted - *measured) > o.speedup_tolerance;
}

bool record_over(const schedules::MeasuredComparison& c, const ValidateOptions& o) {
  return time_over(c.error_pct(), o) || speedup_over(c.run.speedup_vs_regular, c.predicted_speedup, o);
}

bool config_over(const schedules::MeasuredConfigSummary& s, const ValidateOptions& o) {
  return time_over(s.error_pct(), o) || speedup_over(s.speedup_median, s.predicted_speedup_median, o);
}

/** --judge configs adds these to the per-record rows; "runs" tells them apart. */
nlohmann::json config_rows(const std::vector<schedules::MeasuredConfigSummary>& configs) {
  nlohmann::json out = nlohmann::json::array();
  auto add = [&](const schedules::MeasuredConfigSummary& s, const std::string& metric, double measured,
                 double predicted) {
    nlohmann::json row = row_json({"measured " + s.device, s.label, metric, measured, predicted}, 1e-4);
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
double print_records(const std::vector<schedules::MeasuredComparison>& cs, const ValidateOptions& o) {
  std::cout << fmt::format("# {:<58} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7} {:>7}  {}\n",
                           "config (layer runner)", "measured", "predicted", "error", "speedup", "speedup",
                           "overlap", "overlap", "profile");
  std::cout << fmt::format("# {:<58} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7} {:>7}\n", "", "(ms)", "(ms)", "(%)",
                           "meas.", "pred.", "meas.%", "pred.%");
  double sum_abs = 0;
  for (const auto& c : cs) {
    const bool with_speedup = c.predicted_speedup && c.run.speedup_vs_regular;
    std::cout << fmt::format("  {:<58} {:>9.3f} {:>9.3f} {:>+7.1f} {:>8} {:>8} {:>7.1f} {:>7.1f}  {}{}\n",
                             c.run.label(), c.run.stack_ms, c.predicted_ms, c.error_pct(),
                             with_speedup ? fmt::format("{:.3f}", *c.run.speedup_vs_regular) : "-",
                             with_speedup ? fmt::format("{:.3f}", *c.predicted_speedup) : "-",
                             c.run.overlap_pct, c.predicted_overlap_pct, c.hw,
                             record_over(c, o) ? "  << over" : "");
    sum_abs += std::abs(c.error_pct());
  }
  return sum_abs;
}

/** Returns the sum of |time error| of the medians. */
double print_configs(const std::vector<schedules::MeasuredConfigSummary>& configs, const ValidateOptions& o) {
  std::cout << "# per config: median over repeated runs\n";
  std::cout << fmt::format("# {:<58} {:>4} {:>9} {:>17} {:>9} {:>7} {:>8} {:>13} {:>8}  {}\n",
                           "config (layer runner)", "runs", "measured", "measured", "predicted", "error",
                           "speedup", "speedup", "speedup", "profile");
  std::cout << fmt::format("# {:<58} {:>4} {:>9} {:>17} {:>9} {:>7} {:>8} {:>13} {:>8}\n", "", "",
                           "med. (ms)", "[min-max] (ms)", "(ms)", "(%)", "meas.med", "[min-max]", "pred.");
  double sum_abs = 0;
  for (const auto& s : configs) {
    const bool with_speedup = s.speedup_median.has_value();
    std::cout << fmt::format(
        "  {:<58} {:>4} {:>9.3f} {:>17} {:>9.3f} {:>+7.1f} {:>8} {:>13} {:>8}  {}{}\n", s.label, s.runs,
        s.measured_ms_median, fmt::format("[{:.3f}-{:.3f}]", s.measured_ms_min, s.measured_ms_max),
        s.predicted_ms, s.error_pct(), with_speedup ? fmt::format("{:.3f}", *s.speedup_median) : "-",
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
int print_measured(const std::vector<schedules::MeasuredComparison>& cs, const ValidateOptions& o) {
  const bool by_config = o.judge == "configs";
  int records_over = 0, configs_over = 0;
  for (const auto& c : cs) records_over += record_over(c, o) ? 1 : 0;
  std::vector<schedules::MeasuredConfigSummary> configs;
  if (by_config) configs = schedules::summarize_by_config(cs);
  for (const auto& s : configs) configs_over += config_over(s, o) ? 1 : 0;
  const int failed = by_config ? configs_over : records_over;
  if (!o.json_path.empty()) {
    std::vector<schedules::ValidationRow> rows = measured_rows(cs);
    if (o.steps) {
      std::vector<schedules::ValidationRow> steps = step_rows(cs);
      rows.insert(rows.end(), steps.begin(), steps.end());
    }
    write_rows(o.json_path, rows, 1e-4, config_rows(configs));
  }
  if (o.json_path == "-") return failed > 0 ? 1 : 0;
  const double record_error = mean_of(print_records(cs, o), cs.size());
  const bool judged = o.tolerance > 0 || o.speedup_tolerance > 0;
  double config_error = 0;
  if (by_config) config_error = mean_of(print_configs(configs, o), configs.size());
  if (o.steps) print_steps(cs);
  if (by_config) {
    std::cout << fmt::format(
        "# {} records in {} configs, mean |time error| {:.1f}% (per record) / {:.1f}% (per config median)",
        cs.size(), configs.size(), record_error, config_error);
    if (judged) {
      std::cout << fmt::format(
          ", {} records and {} configs over the tolerances (time {:.1f}%, speedup {:.3f}): {}", records_over,
          configs_over, o.tolerance, o.speedup_tolerance, configs_over ? "FAIL" : "PASS");
    }
  } else {
    std::cout << fmt::format("# {} records, mean |time error| {:.1f}%", cs.size(), record_error);
    if (judged) {
      std::cout << fmt::format(", {} over the tolerances (time {:.1f}%, speedup {:.3f}): {}", records_over,
                               o.tolerance, o.speedup_tolerance, records_over ? "FAIL" : "PASS");
    }
  }
  std::cout << "\n";
  return failed > 0 ? 1 : 0;
}

int run_validate(const ValidateOptions& o) {
  if (o.published == !o.measured.empty())
    throw ConfigError("", "--published", "give exactly one of --published or --measured FILE...");
  if (!o.measured.empty()) {
    std::vector<schedules::MeasuredRun> runs;
    for (const auto& file : o.measured) {
      auto more = schedules::read_layer_runner_results(file);
      runs.insert(runs.end(), more.begin(), more.end());
    }
    return print_measured(schedules::compare_measured(runs, o.hw), o);
  }
  if (!o.hw.empty()) throw ConfigError("", "--hw", "applies only to --measured");
  if (o.judge != "records") throw ConfigError("", "--judge", "applies only to --measured");
  if (o.steps) throw ConfigError("", "--steps", "applies only to --measured");
  auto rows = schedules::published_validation();
  int over = 0;
  for (const auto& r : rows) over += o.tolerance > 0 && std::abs(r.error_pct()) > o.tolerance ? 1 : 0;
  if (!o.json_path.empty()) write_rows(o.json_path, rows, 0);
  if (o.json_path != "-") {
    std::cout << fmt::format("# {:<22} {:<48} {:<22} {:>10} {:>10} {:>8}\n", "source", "scenario", "metric",
                             "published", "predicted", "error");
    std::cout << fmt::format("# {:<22} {:<48} {:<22} {:>10} {:>10} {:>8}\n", "", "", "", "", "", "(%)");
    for (const auto& r : rows) {
      std::cout << fmt::format("  {:<22} {:<48} {:<22} {:>10.3f} {:>10.3f} {:>+8.1f}\n", r.source, r.scenario,
                               r.metric, r.published, r.predicted, r.error_pct());
    }
    double mean_abs = 0;
    for (const auto& r : rows) mean_abs += std::abs(r.error_pct()) / static_cast<double>(rows.size());
    std::cout << fmt::format("# {} rows, mean |error| {:.1f}%", rows.size(), mean_abs);
    if (o.tolerance > 0)
      std::cout << fmt::format(", {} over the {:.1f}% tolerance: {}", over, o.tolerance,
                               over ? "FAIL" : "PASS");
    std::cout << "\n";
  }
  return over > 0 ? 1 : 0;
}
}  // namespace

void add_validate(CLI::App& app, const Invocation&, Action& action) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand("validate", "Compare predictions with published results");
  sub->add_flag("--published", o->published, "Every published figure the shipped schedules cover");
  sub->add_option("--measured", o->measured,
                  "Layer-runner results (kernels/layer_runner -J FILE): simulate every record and compare")
      ->check(CLI::ExistingFile);
  sub->add_option("--hw", o->hw,
                  "With --measured: this profile instead of the one matching the runner's GPU");
  sub->add_option("--tolerance", o->tolerance, "Exit 1 when any |time error| exceeds PCT")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--speedup-tolerance", o->speedup_tolerance,
                  "With --measured: exit 1 when any |predicted - measured| FarSkip speedup exceeds X")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--judge", o->judge,
                  "With --measured: records (each record against the tolerances) or configs (also the median "
                  "of each config's repeated runs, which then decides the exit code)")
      ->check(CLI::IsMember({"records", "configs"}));
  sub->add_flag(
      "--steps", o->steps,
      "With --measured: for records with an op profile (layer_runner --op-profile on), each step's GPU "
      "and host time, measured and predicted");
  sub->add_option("--json", o->json_path,
                  "Write the rows as JSON to FILE (the table still prints), or only them to stdout with -");
  sub->callback([o, &action] { action = [o] { return run_validate(*o); }; });
}

}  // namespace moesim::app
