// `moesim sweep SPEC.json`: every point is a `moesim simulate` invocation built from the sweep file.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "Commands.hpp"
#include "FlagChecks.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/reports/HtmlReport.hpp"
#include "moesim/reports/Metrics.hpp"
#include "moesim/schedules/ScenarioFlags.hpp"
#include "moesim/schedules/Simulation.hpp"
#include "moesim/sweep/Runner.hpp"
#include "moesim/sweep/Shard.hpp"

namespace moesim::app {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int signal) {
  g_interrupted.store(true);
  std::signal(signal, SIG_DFL);  // a second Ctrl-C ends the process at once
}

struct SweepOptions {
  std::string spec_path;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string out;
  bool resume = false;
  std::string report_dir;
  std::string shard;  ///< "K/N", empty for the whole sweep
};

struct MergeOptions {
  std::string out;
  std::vector<std::string> dirs;
};

/** A point's scenario and its --compare schedule ("" when none). */
struct PointScenario {
  schedules::Scenario scenario;
  std::string compare;
};

/** The point's flags set as `moesim simulate` would take them, so every simulate flag is an axis. */
PointScenario parse_point(const std::map<std::string, std::string>& params) {
  schedules::ScenarioFlags flags;
  PointScenario out;
  for (const auto& [key, value] : params) {
    if (key == "compare") {
      out.compare = value;
    } else {
      flags.set(key, value);
    }
  }
  out.scenario = schedules::make_scenario(flags);
  return out;
}

sweep::Row run_point(const sweep::Point& point) {
  sweep::Row row;
  row.id = point.id;
  row.axis_values = point.axis_values;
  try {
    auto [scenario, compare] = parse_point(point.params);
    auto result = schedules::simulate(scenario);
    row.metrics = reports::sweep_values(result);
    if (!compare.empty()) {
      row.metrics["speedup"] =
          schedules::simulate(schedules::baseline_of(scenario, compare)).step_ms / result.step_ms;
    }
  } catch (const std::exception& e) {
    row.ok = false;
    row.error = e.what();
  }
  return row;
}

/** The sweep's charts, plus the Gantt of its best point (and that point's baseline). */
void write_sweep_report(const std::string& dir, const sweep::SweepSpec& spec,
                        const std::vector<sweep::Point>& points, const sweep::ResultLog& log) {
  reports::SweepTable table;
  table.name = std::filesystem::path(spec.file).stem().string();
  table.axes = spec.axis_names;
  table.metric = spec.metric;
  for (const auto& row : log.read_all()) table.points.push_back({row.axis_values, row.ok, row.metrics});
  std::vector<schedules::SimulationResult> shown;
  if (auto best = reports::best_sweep_point(table)) {
    for (const auto& p : points) {
      if (p.axis_values != best->params) continue;
      auto [scenario, compare] = parse_point(p.params);
      shown.push_back(schedules::simulate(scenario));
      if (!compare.empty()) shown.push_back(schedules::simulate(schedules::baseline_of(scenario, compare)));
    }
  }
  std::vector<const schedules::SimulationResult*> rows;
  for (const auto& r : shown) rows.push_back(&r);
  reports::write_report(dir, rows, &table);
  std::cout << "# report: " << dir << "/index.html\n";
}

/** The sweep file's metric must be one a point reports. */
void check_metric(const sweep::SweepSpec& spec) {
  const std::vector<std::string> metrics = reports::sweep_columns();
  if (std::find(metrics.begin(), metrics.end(), spec.metric) != metrics.end()) return;
  std::string names;
  for (const auto& m : metrics) names += (names.empty() ? "" : ", ") + m;
  throw ConfigError(spec.file, "/metric",
                    "= \"" + spec.metric.substr(0, 60) + "\": expected one of " + names);
}

/** Exit 2 when no point of the finished sweep succeeded: its file holds errors only. */
int exit_code_of(const sweep::ResultLog& log, const std::string& out) {
  const std::vector<sweep::Row> rows = log.read_all();
  if (std::any_of(rows.begin(), rows.end(), [](const sweep::Row& r) { return r.ok; })) return 0;
  std::cerr << "moesim: error: every point of the sweep failed (" << out << "); the first: "
            << (rows.empty() ? std::string("none ran") : rows.front().error.substr(0, 500)) << "\n";
  return 2;
}

int run_sweep_command(const SweepOptions& o) {
  auto spec = sweep::load_sweep(o.spec_path);
  check_metric(spec);
  auto points = sweep::expand(spec);
  if (points.empty()) throw ConfigError(o.spec_path, "/filter", "leaves no point to run");
  std::string stem = std::filesystem::path(o.spec_path).stem().string();
  if (!o.shard.empty()) {
    const auto shard = sweep::parse_shard(o.shard);
    points = sweep::select_shard(points, shard);
    stem += ".shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  }
  std::string out = o.out.empty() ? stem + ".results.csv" : o.out;
  std::vector<NamedPath> outputs = {{"--out", out}};
  if (!o.shard.empty()) outputs.push_back({"the shard manifest", sweep::manifest_path(out)});
  for (NamedPath& file : report_outputs(o.report_dir)) outputs.push_back(std::move(file));
  check_outputs(outputs, {{"the sweep file", o.spec_path}});
  sweep::ResultLog log(out, spec.axis_names, reports::sweep_columns(), o.resume);
  if (!o.shard.empty()) sweep::write_shard_manifest(out, o.spec_path, sweep::parse_shard(o.shard));
  g_interrupted.store(false);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  auto summary =
      sweep::run_sweep(points, o.jobs, run_point, log, g_interrupted, std::cerr, isatty(STDERR_FILENO) != 0);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (summary.interrupted) {
    std::cerr << "moesim: interrupted: " << summary.skipped + summary.ran << " of " << summary.total
              << " points are in " << out << "; rerun with --resume to finish\n";
    if (summary.abandoned > 0) {
      // Points still simulating run on detached threads that must not outlive main's cleanup.
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(130);
    }
    return 130;
  }
  log.finalize(points);
  if (!o.report_dir.empty()) write_sweep_report(o.report_dir, spec, points, log);
  std::cout << "# sweep " << o.spec_path << (o.shard.empty() ? "" : " shard " + o.shard) << ": "
            << summary.total << " points (" << summary.skipped << " already done, " << summary.ran << " run, "
            << summary.failed << " failed) -> " << out << "\n";
  return points.empty() ? 0 : exit_code_of(log, out);  // a shard of a small sweep may hold no point
}

int run_merge_command(const MergeOptions& o) {
  auto summary = sweep::merge_shards(o.out, o.dirs, reports::sweep_columns());
  std::cout << "# merged " << summary.files << " shard files (" << summary.shards << " shards, "
            << summary.duplicates << " duplicate rows dropped): " << summary.points << " points -> " << o.out
            << "\n";
  return 0;
}

}  // namespace

void add_sweep(CLI::App& app, Action& action) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run every point of a sweep file; resumable CSV/JSONL results");
  sub->add_option("spec", o->spec_path, "Sweep file (JSON: base, axes, zip, filter, metric)");
  sub->add_option("--jobs", o->jobs, "Points simulated at once (default: cores)")->check(CLI::Range(1, 1024));
  sub->add_option("--out", o->out, "Results file, .csv or .jsonl (default: <spec>.results.csv)");
  sub->add_flag("--resume", o->resume, "Continue an interrupted sweep: skip the points already in --out");
  sub->add_option("--report", o->report_dir, "Write DIR/index.html (charts per axis, best point's timeline)");
  sub->add_option(
      "--shard", o->shard,
      "Run only shard K of N (K/N, 1-based; points K, K+N, ...): for job arrays, then `sweep merge`");
  auto m = std::make_shared<MergeOptions>();
  CLI::App* merge =
      sub->add_subcommand("merge", "Merge shard results (--shard K/N runs) into one results file");
  merge->add_option("out", m->out, "Merged results file (.csv or .jsonl, as the shards); must not exist")
      ->required();
  merge->add_option("dirs", m->dirs, "Directories holding the shard results (or the shard result files)")
      ->required();
  sub->callback([o, m, sub, merge, &action] {
    if (sub->got_subcommand(merge)) {
      action = [m] { return run_merge_command(*m); };
    } else if (o->spec_path.empty()) {
      throw CLI::RequiredError("spec");
    } else {
      action = [o] { return run_sweep_command(*o); };
    }
  });
}

}  // namespace moesim::app
