// `moesim simulate`: flags → Scenario → simulate → table, JSON, trace.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "Commands.hpp"
#include "FlagChecks.hpp"
#include "ScenarioOptions.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/reports/ChromeTrace.hpp"
#include "moesim/reports/HtmlReport.hpp"
#include "moesim/reports/ResultJson.hpp"
#include "moesim/reports/SummaryTable.hpp"
#include "moesim/sim/BackendName.hpp"

namespace moesim::app {

namespace {

struct SimulateOptions {
  ScenarioOptions scenario;
  std::string compare;
  std::string compare_engine;
  std::string json_path;
  std::string trace_path;
  std::string report_dir;
};

/** `--degree auto`: the step time of every overlap degree tried, nccl-tests style, best marked. */
void print_degree_curve(std::ostream& out, const std::vector<const schedules::SimulationResult*>& rows) {
  for (const auto* r : rows) {
    if (r->degree_curve.empty()) continue;
    out << fmt::format("# degree search: {} (best d = {})\n", r->scenario.schedule, r->degree);
    out << fmt::format("# {:>6} {:>12} {:>12} {:>9}\n", "d", "step", "layer", "vs best");
    out << fmt::format("# {:>6} {:>12} {:>12} {:>9}\n", "", "(ms)", "(ms)", "");
    for (auto [d, step_ms] : r->degree_curve) {
      out << fmt::format("  {:>6} {:>12.3f} {:>12.3f} {:>9.3f}{}\n", d, step_ms, step_ms / r->layers,
                         step_ms / r->step_ms, d == r->degree ? "  <- best" : "");
    }
  }
}

/** The files a scenario was read from: no output may replace one. */
std::vector<NamedPath> scenario_inputs(const schedules::Scenario& s) {
  return {{"--model", s.model.file},
          {"--hw", s.hw.source_file},
          {"--routing", s.workload.routing.histogram_file}};
}

int run_simulate(const SimulateOptions& o, const Invocation& invocation) {
  schedules::Scenario primary = schedules::make_scenario(o.scenario);
  std::vector<NamedPath> outputs = {{"--json", o.json_path}, {"--trace", o.trace_path}};
  for (NamedPath& file : report_outputs(o.report_dir)) outputs.push_back(std::move(file));
  check_outputs(outputs, scenario_inputs(primary));
  auto result = schedules::simulate(primary);
  std::unique_ptr<schedules::SimulationResult> baseline;
  if (!o.compare.empty()) {
    baseline = std::make_unique<schedules::SimulationResult>(
        schedules::simulate(schedules::baseline_of(primary, o.compare)));
  } else if (!o.compare_engine.empty()) {
    schedules::Scenario other = primary;
    other.engine = sim::parse_backend(o.compare_engine, "--compare-engine");
    baseline = std::make_unique<schedules::SimulationResult>(schedules::simulate(other));
  }
  const bool json_to_stdout = o.json_path == "-";
  if (!json_to_stdout) {
    std::vector<const schedules::SimulationResult*> rows{&result};
    if (baseline) rows.push_back(baseline.get());
    reports::print_summary(std::cout, rows);
    print_degree_curve(std::cout, rows);
  }
  if (!o.json_path.empty()) {
    reports::RunContext ctx{MOESIM_VERSION, MOESIM_GIT_SHA, invocation.args};
    auto doc = reports::result_json(result, baseline.get(), ctx);
    write_text(o.json_path, "result JSON", [&](std::ostream& out) { out << doc.dump(2) << "\n"; });
  }
  if (!o.trace_path.empty()) {
    write_text(o.trace_path, "trace", [&](std::ostream& out) { reports::write_chrome_trace(out, result); });
    if (!json_to_stdout) std::cout << "# trace: " << o.trace_path << " (open in https://ui.perfetto.dev)\n";
  }
  if (!o.report_dir.empty()) {
    std::vector<const schedules::SimulationResult*> rows{&result};
    if (baseline) rows.push_back(baseline.get());
    reports::write_report(o.report_dir, rows);
    if (!json_to_stdout) std::cout << "# report: " << o.report_dir << "/index.html\n";
  }
  return 0;
}

}  // namespace

void add_simulate(CLI::App& app, const Invocation& invocation, Action& action) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* sub =
      app.add_subcommand("simulate", "Simulate one scenario (optionally against a baseline schedule)");
  add_scenario_options(*sub, options->scenario);
  auto* compare =
      sub->add_option("--compare", options->compare, "Also simulate this schedule and report speedup_vs it");
  sub->add_option("--compare-engine", options->compare_engine,
                  "Also simulate the same scenario on this engine (analytic | simgrid): a row per engine, "
                  "speedup_vs the second")
      ->check(CLI::IsMember({"analytic", "simgrid"}))
      ->excludes(compare);
  sub->add_option("--json", options->json_path, "Write the result record as JSON to FILE, or - for stdout");
  sub->add_option("--trace", options->trace_path, "Write a Chrome/Perfetto trace of the run to FILE");
  sub->add_option("--report", options->report_dir, "Write DIR/index.html, DIR/trace.json and DIR/summary.md");
  sub->callback([options, &invocation, &action] {
    action = [options, &invocation] { return run_simulate(*options, invocation); };
  });
}

}  // namespace moesim::app
