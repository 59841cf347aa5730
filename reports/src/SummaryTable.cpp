#include "moesim/reports/SummaryTable.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ResultLabel.hpp"

namespace moesim::reports {

namespace {
std::string scenario_line(const schedules::SimulationResult& r) {
  const auto& s = r.scenario;
  const double straggle = schedules::host_straggle(s);
  return fmt::format(
      "# {} on {} x{} ({} profile '{}'), {}, {}, EP={} TP={}, {} tokens/rank, seq {}, {}, {} layers{}, "
      "implementation {}{}{}",
      s.model.name, s.hw.gpu.name, r.world, hw::to_string(s.hw.provenance.kind), s.hw.name,
      schedules::to_string(s.workload.phase), schedules::to_string(s.parallel.moe_comm), s.parallel.ep,
      s.parallel.tp, s.workload.tokens, s.workload.seq_len, models::to_string(s.workload.dtype), r.layers,
      r.symmetric ? " (symmetric: one rank simulated)" : " (every rank simulated)",
      schedules::implementation_name(s),
      s.host_speed != 1 ? fmt::format(" (host speed {:g})", s.host_speed) : "",
      straggle != 1 ? fmt::format(" (forward host costs x{:.3f}: the slowest of {} ranks' hosts)", straggle,
                                  s.parallel.ep)
                    : "");
}
std::string schedule_and_engine(const schedules::SimulationResult& r) {
  return r.scenario.schedule + engine_tag(r);
}

// Half the critical path on the host: the GPU waits for launches more than it works.
constexpr double kHostBoundPct = 50;

// The host's share of the critical path (%): kernel launches, the stack's own host work, host syncs.
double host_share_pct(const schedules::SimulationResult& r) {
  sim::TimeNs host = 0;
  for (const auto& [category, ns] : r.analysis.critical_path_by_category)
    if (category == "launch" || category == "host" || category == "host_sync") host += ns;
  return 100.0 * static_cast<double>(host) / static_cast<double>(std::max<sim::TimeNs>(r.run.makespan_ns, 1));
}
}  // namespace

void print_summary(std::ostream& out, const std::vector<const schedules::SimulationResult*>& results) {
  if (results.empty()) return;
  std::vector<std::string> labels;
  std::size_t width = 10;
  for (const auto* r : results) {
    const std::string label = result_label(*r, ",");
    width = std::max(width, label.size());
    labels.push_back(label);
  }
  out << scenario_line(*results.front()) << "\n#\n";
  out << fmt::format("# {:<{}} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>11} {:>8}\n", "schedule",
                     width, "step", "layer", "compute", "comm", "exposed", "overlap", "SM busy", "MFU",
                     "tokens/s", "speedup");
  out << fmt::format("# {:<{}} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>11} {:>8}\n", "", width,
                     "(ms)", "(ms)", "(ms)", "(ms)", "(ms)", "(%)", "(%)", "(%)", "(tok/s)", "(x)");
  const auto* base = results.size() > 1 ? results.back() : nullptr;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto* r = results[i];
    std::string speed = base ? fmt::format("{:.3f}", base->step_ms / r->step_ms) : "-";
    out << fmt::format(
        "  {:<{}} {:>10.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.1f} {:>8.1f} {:>6.1f} {:>11.4g} {:>8}\n",
        labels[i], width, r->step_ms, r->layer_ms, r->compute_ms, r->comm_ms, r->exposed_comm_ms,
        r->overlap_pct, r->sm_busy_pct, r->mfu_pct, r->tokens_per_s, speed);
  }
  for (const auto* r : results) {
    std::vector<std::pair<sim::TimeNs, std::string>> shares;
    for (const auto& [cat, ns] : r->analysis.critical_path_by_category) shares.emplace_back(ns, cat);
    std::sort(shares.rbegin(), shares.rend());
    std::string line;
    for (const auto& [ns, cat] : shares) {
      double pct =
          100.0 * static_cast<double>(ns) / static_cast<double>(std::max<sim::TimeNs>(r->run.makespan_ns, 1));
      if (pct >= 0.5) line += fmt::format("{}{} {:.1f}%", line.empty() ? "" : ", ", cat, pct);
    }
    out << "# critical path (" << schedule_and_engine(*r) << "): " << line << "\n";
    const double host_pct = host_share_pct(*r);
    if (host_pct >= kHostBoundPct)
      out << fmt::format(
          "# host-bound ({}): the host's launches and syncs are {:.0f}% of the critical path, so the step "
          "moves with the host's speed (hosts of one GPU kind differ up to 2-3x): --host-speed S, or "
          "--host-probe US with a profile that carries a probe (docs/usage.md)\n",
          schedule_and_engine(*r), host_pct);
    for (const auto& g : r->figures) {
      for (const auto& text : g.summary) out << text << "\n";
    }
    if (r->repeat_layer_ms.size() > 1 || r->noise.scope != sim::JitterScope::NONE) {
      out << fmt::format(
          "# noise ({}): {} runs, jitter median {:.1f} us p95 {:.1f} us{}: layer p50 {:.3f} ms, p95 {:.3f} "
          "ms\n",
          schedule_and_engine(*r), r->repeat_layer_ms.size(), r->noise.median_us, r->noise.p95_us,
          r->noise.preset.empty() ? "" : " (" + r->noise.preset + ")", r->layer_ms_p50, r->layer_ms_p95);
    }
    if (r->power.modeled && !r->power.speed.empty()) {
      const auto [slowest, fastest] = std::minmax_element(r->power.speed.begin(), r->power.speed.end());
      const double uncapped =
          *std::max_element(r->power.uncapped_power_w.begin(), r->power.uncapped_power_w.end());
      out << fmt::format(
          "# power ({}): compute speed {:.3f}{} of full clock under the {:.0f} W limit (would draw {:.0f} W "
          "uncapped){}\n",
          schedule_and_engine(*r), *slowest, *fastest > *slowest ? fmt::format("..{:.3f}", *fastest) : "",
          r->scenario.hw.power.limit_w, uncapped, r->power.converged ? "" : "; governor did not converge");
    }
  }
}

}  // namespace moesim::reports
