// `moesim validate`: predicted vs published figures (--published) or layer-runner measurements
// (--measured), with error %; --json writes the rows to a file (the table still prints) or, with -, prints
// only the rows. --judge configs judges the median of each config's repeated runs instead of every record,
// since one config's measurements spread between leases by more than the speedup tolerance. --steps adds,
// for records with the runner's op profile, each step's GPU and host time measured and predicted.
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/validate/Judge.hpp"

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

void write_json(const std::string& path, const nlohmann::json& rows) {
  write_text(path, "validation rows", [&](std::ostream& stream) { stream << rows.dump(2) << "\n"; });
}

int run_validate(const ValidateOptions& o) {
  if (o.published == !o.measured.empty())
    throw ConfigError("", "--published", "give exactly one of --published or --measured FILE...");
  if (!o.measured.empty()) {
    std::vector<validate::MeasuredRun> runs;
    for (const auto& file : o.measured) {
      auto more = validate::read_layer_runner_results(file);
      runs.insert(runs.end(), more.begin(), more.end());
    }
    const auto comparisons = validate::compare_measured(runs, o.hw);
    const validate::JudgeOptions judge{o.tolerance, o.speedup_tolerance, o.judge == "configs", o.steps};
    if (!o.json_path.empty()) write_json(o.json_path, validate::measured_rows_json(comparisons, judge));
    if (o.json_path != "-") validate::print_measured(std::cout, comparisons, judge);
    return validate::measured_failures(comparisons, judge) > 0 ? 1 : 0;
  }
  if (!o.hw.empty()) throw ConfigError("", "--hw", "applies only to --measured");
  if (o.judge != "records") throw ConfigError("", "--judge", "applies only to --measured");
  if (o.steps) throw ConfigError("", "--steps", "applies only to --measured");
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
  sub->add_option("--measured", o->measured,
                  "Layer-runner results (kernels/layer_runner -J FILE): simulate every record and compare")
      ->check(CLI::ExistingFile);
  sub->add_option("--hw", o->hw,
                  "With --measured: this profile instead of the one matching the runner's GPU");
  sub->add_option(
         "--tolerance", o->tolerance,
         "Exit 1 when any |time error| exceeds PCT; with --published: when any row is off, figure rows "
         "that set no tolerance judged at PCT instead of 15")
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
