// `moesim validate`: predicted vs published figures (--published) or layer-runner measurements
// (--measured), with error %; --json writes the rows to a file (the table still prints) or, with -, prints
// only the rows.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

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
};

double round_to(double v, double unit) {
  return std::round(v / unit) * unit;
}

/** The --json rows: {source, scenario, metric, published_or_measured, predicted, error_pct}. */
void write_rows(const std::string& path, const std::vector<schedules::ValidationRow>& rows,
                double value_unit) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back(
        {{"source", r.source},
         {"scenario", r.scenario},
         {"metric", r.metric},
         {"published_or_measured", value_unit > 0 ? round_to(r.published, value_unit) : r.published},
         {"predicted", round_to(r.predicted, 1e-4)},
         {"error_pct", round_to(r.error_pct(), 0.01)}});
  }
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

int print_measured(const std::vector<schedules::MeasuredComparison>& cs, const ValidateOptions& o) {
  int over = 0;
  auto time_over = [&](const schedules::MeasuredComparison& c) {
    return o.tolerance > 0 && std::abs(c.error_pct()) > o.tolerance;
  };
  auto speedup_over = [&](const schedules::MeasuredComparison& c) {
    return o.speedup_tolerance > 0 && c.predicted_speedup && c.run.speedup_vs_regular &&
           std::abs(*c.predicted_speedup - *c.run.speedup_vs_regular) > o.speedup_tolerance;
  };
  for (const auto& c : cs) over += (time_over(c) ? 1 : 0) + (speedup_over(c) ? 1 : 0);
  if (!o.json_path.empty()) write_rows(o.json_path, measured_rows(cs), 1e-4);
  if (o.json_path == "-") return over > 0 ? 1 : 0;
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
                             time_over(c) || speedup_over(c) ? "  << over" : "");
    sum_abs += std::abs(c.error_pct());
  }
  std::cout << fmt::format("# {} records, mean |time error| {:.1f}%", cs.size(),
                           cs.empty() ? 0.0 : sum_abs / static_cast<double>(cs.size()));
  if (o.tolerance > 0 || o.speedup_tolerance > 0) {
    std::cout << fmt::format(", {} over the tolerances (time {:.1f}%, speedup {:.3f}): {}", over, o.tolerance,
                             o.speedup_tolerance, over ? "FAIL" : "PASS");
  }
  std::cout << "\n";
  return over > 0 ? 1 : 0;
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
  sub->add_option("--json", o->json_path,
                  "Write the rows as JSON to FILE (the table still prints), or only them to stdout with -");
  sub->callback([o, &action] { action = [o] { return run_validate(*o); }; });
}

}  // namespace moesim::app
