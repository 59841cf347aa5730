#include "moesim/reports/Metrics.hpp"

#include <cmath>

namespace moesim::reports {

const std::vector<Metric>& headline_metrics() {
  using R = schedules::SimulationResult;
  static const std::vector<Metric> list = {
      {"step_ms", Rounding::MILLISECONDS, [](const R& r) { return r.step_ms; }, true},
      {"layer_ms", Rounding::MILLISECONDS, [](const R& r) { return r.layer_ms; }, true},
      {"compute_ms", Rounding::MILLISECONDS, [](const R& r) { return r.compute_ms; }, true},
      {"comm_ms", Rounding::MILLISECONDS, [](const R& r) { return r.comm_ms; }, true},
      {"exposed_comm_ms", Rounding::MILLISECONDS, [](const R& r) { return r.exposed_comm_ms; }, true},
      {"overlap_pct", Rounding::PERCENT, [](const R& r) { return r.overlap_pct; }, true},
      {"sm_busy_pct", Rounding::PERCENT, [](const R& r) { return r.sm_busy_pct; }, true},
      {"mfu_pct", Rounding::PERCENT, [](const R& r) { return r.mfu_pct; }, true},
      {"tokens_per_s", Rounding::WHOLE, [](const R& r) { return r.tokens_per_s; }, true},
      {"sm_util_pct", Rounding::PERCENT, [](const R& r) { return r.sm_util_pct; }, false},
  };
  return list;
}

double rounded(double value, Rounding rounding) {
  switch (rounding) {
    case Rounding::MILLISECONDS:
      return std::round(value * 1e6) / 1e6;
    case Rounding::PERCENT:
      return std::round(value * 1e3) / 1e3;
    case Rounding::WHOLE:
      return std::round(value);
  }
  return value;
}

std::vector<std::string> sweep_columns() {
  std::vector<std::string> out;
  for (const Metric& m : headline_metrics())
    if (m.sweep_column) out.push_back(m.name);
  out.push_back("speedup");
  return out;
}

std::map<std::string, double> sweep_values(const schedules::SimulationResult& r) {
  std::map<std::string, double> out;
  for (const Metric& m : headline_metrics())
    if (m.sweep_column) out[m.name] = m.value(r);
  return out;
}

}  // namespace moesim::reports
