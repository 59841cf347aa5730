#include "moesim/reports/ResultJson.hpp"

#include <type_traits>
#include <variant>

#include "moesim/reports/Metrics.hpp"
#include "moesim/sim/BackendName.hpp"
#include "moesim/sim/Types.hpp"

namespace moesim::reports {

namespace {
double ms(double v) {
  return rounded(v, Rounding::MILLISECONDS);
}
double pct(double v) {
  return rounded(v, Rounding::PERCENT);
}

/** A schedule family's figure group as a JSON object; times in ms are rounded like the headline ones. */
nlohmann::json figures_json(const schedules::FigureGroup& g) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : g.values) {
    std::visit(
        [&](auto v) {
          if constexpr (std::is_same_v<decltype(v), double>) {
            out[f.name] = f.milliseconds ? ms(v) : v;
          } else {
            out[f.name] = v;
          }
        },
        f.value);
  }
  return out;
}

std::string routing_text(const models::RoutingSpec& r) {
  switch (r.kind) {
    case models::RoutingSpec::Kind::BALANCED:
      return "balanced";
    case models::RoutingSpec::Kind::UNIFORM:
      return "uniform";
    case models::RoutingSpec::Kind::ZIPF:
      return "zipf:" + nlohmann::json(r.zipf_s).dump();
    case models::RoutingSpec::Kind::HISTOGRAM:
      return "histogram:" + r.histogram_file;
    case models::RoutingSpec::Kind::RECORDED:
      return "recorded:" + (r.histogram_file.empty() ? std::string("(in memory)") : r.histogram_file);
  }
  return "?";
}
}  // namespace

nlohmann::json scenario_json(const schedules::Scenario& s) {
  nlohmann::json j;
  j["model"] = s.model.name;
  j["hw"] = s.hw.name;
  j["hw_provenance"] = hw::to_string(s.hw.provenance.kind);
  j["schedule"] = s.schedule;
  j["options"] = s.options;
  j["phase"] = schedules::to_string(s.workload.phase);
  j["moe_comm"] = schedules::to_string(s.parallel.moe_comm);
  j["ep"] = s.parallel.ep;
  j["tp"] = s.parallel.tp;
  j["dp"] = s.parallel.dp;
  j["nodes"] = schedules::node_count(s);
  j["tokens_per_rank"] = s.workload.tokens;
  j["seq"] = s.workload.seq_len;
  j["layers"] = schedules::simulated_layers(s);
  j["dtype"] = models::to_string(s.workload.dtype);
  j["routing"] = routing_text(s.workload.routing);
  j["seed"] = s.workload.seed;
  j["capacity_factor"] = s.workload.capacity_factor;
  j["implementation"] = schedules::implementation_name(s);
  j["host_speed"] = s.host_speed;
  j["host_straggle"] = schedules::host_straggle(s);
  return j;
}

nlohmann::json metrics_json(const schedules::SimulationResult& r) {
  nlohmann::json m;
  for (const Metric& metric : headline_metrics()) m[metric.name] = rounded(metric.value(r), metric.rounding);
  if (r.power.modeled) {
    auto rounded = [](const std::vector<double>& values, double scale) {
      nlohmann::json list = nlohmann::json::array();
      for (double v : values) list.push_back(std::round(v * scale) / scale);
      return list;
    };
    m["power"] = {{"speed", rounded(r.power.speed, 1e4)},
                  {"mean_power_w", rounded(r.power.mean_power_w, 10)},
                  {"uncapped_power_w", rounded(r.power.uncapped_power_w, 10)},
                  {"limit_w", r.scenario.hw.power.limit_w},
                  {"runs", r.power.runs},
                  {"converged", r.power.converged}};
  } else {
    m["power"] = {{"not_modeled", r.power.not_modeled_because}};
  }
  for (const auto& g : r.figures) {
    if (g.in_metrics && !g.key.empty()) m[g.key] = figures_json(g);
  }
  if (r.repeat_layer_ms.size() > 1 || r.noise.scope != sim::JitterScope::NONE) {
    m["noise"] = {{"repeat", r.repeat_layer_ms.size()},
                  {"scope", r.noise.scope == sim::JitterScope::RANK_START ? "rank" : "op"},
                  {"preset", r.noise.preset},
                  {"median_us", r.noise.median_us},
                  {"p95_us", r.noise.p95_us},
                  {"layer_ms_p50", ms(r.layer_ms_p50)},
                  {"layer_ms_p95", ms(r.layer_ms_p95)}};
  }
  return m;
}

nlohmann::json result_json(const schedules::SimulationResult& r, const schedules::SimulationResult* baseline,
                           const RunContext& context) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["tool"] = {{"name", "moesim"}, {"version", context.tool_version}, {"git_sha", context.git_sha}};
  j["args"] = context.args;
  j["scenario"] = scenario_json(r.scenario);
  j["engine"] = {{"backend", sim::to_string(r.scenario.engine)},
                 {"symmetric_fast_path", r.symmetric},
                 {"simulated_ranks", r.ranks.size()},
                 {"ops", r.program->ops().size()},
                 {"events", r.run.events}};
  nlohmann::json metrics = metrics_json(r);
  for (auto& [k, v] : metrics.items()) j[k] = v;
  if (baseline != nullptr) {
    j["speedup_vs"] = {{"schedule", baseline->scenario.schedule},
                       {"engine", sim::to_string(baseline->scenario.engine)},
                       {"speedup", std::round(baseline->step_ms / r.step_ms * 1e4) / 1e4},
                       {"baseline", metrics_json(*baseline)}};
  }
  nlohmann::json path = nlohmann::json::object();
  const double total = static_cast<double>(r.run.makespan_ns);
  for (const auto& [cat, ns] : r.analysis.critical_path_by_category) {
    path[cat] = {{"ms", ms(ns / 1e6)}, {"share_pct", pct(total > 0 ? 100.0 * ns / total : 0)}};
  }
  j["critical_path"] = path;
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& f : r.ranks) {
    ranks.push_back({{"rank", f.rank},
                     {"end_ms", ms(f.end_ms)},
                     {"compute_ms", ms(f.compute_ms)},
                     {"comm_ms", ms(f.comm_ms)},
                     {"exposed_comm_ms", ms(f.exposed_comm_ms)},
                     {"overlap_pct", pct(f.overlap_pct)}});
  }
  j["per_rank"] = ranks;
  for (const auto& g : r.figures) {
    if (!g.in_metrics && !g.key.empty()) j[g.key] = figures_json(g);
  }
  return j;
}

}  // namespace moesim::reports
