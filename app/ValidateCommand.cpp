// `moesim validate --published`: predicted vs published, with error %.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/schedules/Published.hpp"

namespace moesim::app {

namespace {
struct ValidateOptions {
  bool published = false;
  double tolerance = 0;
  std::string json_path;
};

int run_validate(const ValidateOptions& o) {
  if (!o.published)
    throw ConfigError("", "--published", "is required (measured validation comes with the layer runner)");
  auto rows = schedules::published_validation();
  int over = 0;
  for (const auto& r : rows) over += o.tolerance > 0 && std::abs(r.error_pct()) > o.tolerance ? 1 : 0;
  if (o.json_path == "-") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
      out.push_back({{"source", r.source},
                     {"scenario", r.scenario},
                     {"metric", r.metric},
                     {"published_or_measured", r.published},
                     {"predicted", std::round(r.predicted * 1e4) / 1e4},
                     {"error_pct", std::round(r.error_pct() * 100) / 100}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
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
  sub->add_option("--tolerance", o->tolerance, "Exit 1 when any |error| exceeds PCT")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", o->json_path, "Print rows as JSON (-)")->check(CLI::IsMember({"-"}));
  sub->callback([o, &action] { action = [o] { return run_validate(*o); }; });
}

}  // namespace moesim::app
