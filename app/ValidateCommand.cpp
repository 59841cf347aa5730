// `moesim validate`: predicted vs published figures (--published) or layer-runner measurements
// (--measured), with error %; --json writes the rows to a file (the table still prints) or, with -, prints
// only the rows. --judge configs judges the median of each config's repeated runs instead of every record,
// since one config's measurements spread between leases by more than the speedup tolerance. --steps adds,
// for records with the runner's op profile, each step's GPU and host time measured and predicted.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.hpp"
#include "FlagChecks.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/traces/TorchStackRecord.hpp"
#include "moesim/traces/TraceFile.hpp"
#include "moesim/validate/Judge.hpp"
#include "moesim/validate/TorchStacks.hpp"

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
  bool host_probe = false;
  std::vector<std::string> impl;
};

void write_json(const std::string& path, const nlohmann::json& rows) {
  write_text(path, "validation rows", [&](std::ostream& stream) { stream << rows.dump(2) << "\n"; });
}

int run_validate(const ValidateOptions& o) {
  if (o.published == !o.measured.empty())
    throw ConfigError("", "--published", "give exactly one of --published or --measured FILE...");
  std::vector<NamedPath> inputs;
  for (const auto& file : o.measured) inputs.push_back({"--measured", file});
  check_outputs({{"--json", o.json_path}}, inputs);
  if (!o.measured.empty()) {
    // Torch-stack records (files or folders of them) and layer-runner results files, in any mix.
    std::vector<std::string> runner_files, stack_paths;
    for (const auto& path : o.measured) {
      const bool runner =
          std::filesystem::is_regular_file(path) &&
          !traces::is_torch_stack_record(parse_json_text(traces::read_trace_text(path), path));
      (runner ? runner_files : stack_paths).push_back(path);
    }
    int failures = 0;
    if (!stack_paths.empty()) {
      const validate::TorchStackOptions options{o.hw, validate::parse_implementation_choice(o.impl), o.steps,
                                                o.host_probe};
      const auto stacks =
          validate::compare_torch_stacks(validate::find_torch_stack_records(stack_paths), options);
      if (!o.json_path.empty() && runner_files.empty())
        write_json(o.json_path, validate::torch_stack_rows_json(stacks));
      if (o.json_path != "-")
        validate::print_torch_stacks(std::cout, stacks, o.tolerance, o.speedup_tolerance);
      failures += validate::torch_stack_failures(stacks, o.tolerance, o.speedup_tolerance);
      if (runner_files.empty()) return failures > 0 ? 1 : 0;
    }
    if (!o.impl.empty()) throw ConfigError("", "--impl", "applies only to torch-stack records");
    if (o.host_probe) throw ConfigError("", "--host-probe", "applies only to torch-stack records");
    std::vector<validate::MeasuredRun> runs;
    for (const auto& file : runner_files) {
      auto more = validate::read_layer_runner_results(file);
      runs.insert(runs.end(), more.begin(), more.end());
    }
    const auto comparisons = validate::compare_measured(runs, o.hw);
    const validate::JudgeOptions judge{o.tolerance, o.speedup_tolerance, o.judge == "configs", o.steps};
    if (!o.json_path.empty()) write_json(o.json_path, validate::measured_rows_json(comparisons, judge));
    if (o.json_path != "-") validate::print_measured(std::cout, comparisons, judge);
    return failures + validate::measured_failures(comparisons, judge) > 0 ? 1 : 0;
  }
  if (!o.hw.empty()) throw ConfigError("", "--hw", "applies only to --measured");
  if (o.judge != "records") throw ConfigError("", "--judge", "applies only to --measured");
  if (o.steps) throw ConfigError("", "--steps", "applies only to --measured");
  if (o.host_probe) throw ConfigError("", "--host-probe", "applies only to --measured torch-stack records");
  if (!o.impl.empty()) throw ConfigError("", "--impl", "applies only to --measured");
  const auto rows =
      validate::published_validation(o.tolerance > 0 ? o.tolerance : validate::kDefaultPublishedTolerancePct);
  if (!o.json_path.empty()) write_json(o.json_path, validate::published_rows_json(rows));
  if (o.json_path != "-") validate::print_published(std::cout, rows, o.tolerance);
  return validate::published_failures(rows, o.tolerance) > 0 ? 1 : 0;
}
}  // namespace

void add_validate(CLI::App& app, const Invocation&, Action& action) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand("validate", "Compare predictions with published results");
  sub->add_flag("--published", o->published, "Every published figure the shipped schedules cover");
  sub->add_option(
         "--measured", o->measured,
         "Layer-runner results (kernels/layer_runner -J FILE) or PyTorch stack records "
         "(kernels/torch_stacks: record files or folders of them): simulate every record and compare")
      ->check(CLI::ExistingPath);
  sub->add_option("--impl", o->impl,
                  "With torch-stack records: the implementation profile (NAME|FILE) for all records, or "
                  "STYLE=PROFILE per style, STYLE@HW=PROFILE per style on hardware profile HW (repeatable); "
                  "default eager for loop, grouped for grouped, hf-eager and hf-grouped_mm for those styles");
  sub->add_option("--hw", o->hw,
                  "With --measured: this profile instead of the one matching the runner's GPU");
  sub->add_option(
         "--tolerance", o->tolerance,
         "Exit 1 when any |time error| exceeds PCT; with --published: when any row is off, figure rows "
         "that set no tolerance judged at PCT instead of 15")
      ->check(finite_in(0, 1e6));
  sub->add_option("--speedup-tolerance", o->speedup_tolerance,
                  "With --measured: exit 1 when any |predicted - measured| FarSkip speedup exceeds X")
      ->check(finite_in(0, 1e6));
  sub->add_option("--judge", o->judge,
                  "With --measured: records (each record against the tolerances) or configs (also the median "
                  "of each config's repeated runs, which then decides the exit code)")
      ->check(CLI::IsMember({"records", "configs"}));
  sub->add_flag(
      "--steps", o->steps,
      "With --measured: for records with an op profile (layer_runner --op-profile on), each step's GPU "
      "and host time, measured and predicted; for torch-stack records with a trace, each op's GPU time, "
      "kernels and host time, forward and backward");
  sub->add_flag(
      "--host-probe", o->host_probe,
      "With torch-stack records: simulate each record's host at the speed its host probe "
      "(host_probe_us) says against the implementation profile's (host.probe_us), where both have one");
  sub->add_option("--json", o->json_path,
                  "Write the rows as JSON to FILE (the table still prints), or only them to stdout with -");
  sub->callback([o, &action] { action = [o] { return run_validate(*o); }; });
}

}  // namespace moesim::app
