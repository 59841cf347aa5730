// FlashMoE family: routing plan, options, figures, memory overhead (§3.2, Table 3).
#include "moesim/schedules/FlashMoe.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "FlashMoePlan.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::schedules {

double symmetric_tensor_bytes(std::int64_t tokens, int experts, std::int64_t hidden, int element_bytes,
                              int tile_m) {
  const std::int64_t capacity = (tokens + experts - 1) / experts;
  const std::int64_t aligned = (capacity + tile_m - 1) / tile_m * tile_m;
  return 4.0 * experts * static_cast<double>(aligned) * static_cast<double>(hidden) * element_bytes;
}

const std::vector<StragglerPreset>& straggler_presets() {
  static const std::vector<StragglerPreset> presets = {
      {"table2-vm", 3.1, 11.4, "FlashMoE Table 2: commercial VM, 1 node x 8 V100, 1750 steps"},
      {"table2-hpc", 1.09, 1.32, "FlashMoE Table 2: supercomputer, 8 nodes x 4 A100, 600 steps"}};
  return presets;
}

namespace detail {

FlashPlan plan_flash(const Scenario& s, bool padded) {
  FlashPlan p;
  p.ep = s.parallel.ep;
  p.experts = s.model.moe.experts;
  p.local = p.experts / p.ep;
  p.top_k = s.model.moe.top_k;
  p.tokens = s.workload.tokens;
  p.hidden = s.model.hidden;
  p.ffn = s.model.moe.expert_ffn;
  p.element = models::bytes_per_element(s.workload.dtype);
  p.padded = padded;
  auto plan = models::route_tokens(s.workload.routing, s.workload.seed, p.ep, p.tokens, p.experts, p.top_k,
                                   s.workload.capacity_factor);
  p.routed = plan.tokens_to_expert;
  if (s.workload.capacity_factor > 0) {
    p.capacity_per_source = static_cast<std::int64_t>(
        std::ceil(s.workload.capacity_factor * static_cast<double>(p.tokens * p.top_k) / p.experts - 1e-9));
  }
  if (padded && p.capacity_per_source == 0)
    throw ConfigError("", "--opt", "payload=padded: padding needs a capacity factor > 0 (--capacity-factor)");
  p.rows = p.routed;
  if (padded) {
    for (auto& row : p.rows) std::fill(row.begin(), row.end(), p.capacity_per_source);
  }
  p.symmetric = true;
  for (const auto& row : p.rows) {
    for (std::int64_t r : row) p.symmetric = p.symmetric && r == p.rows[0][0];
  }
  p.symmetric = p.symmetric && !s.per_rank;
  return p;
}

namespace {
double bytes_off_rank(const FlashPlan& p, const std::vector<std::vector<std::int64_t>>& rows) {
  double total = 0;
  for (int src = 0; src < p.ep; ++src) {
    for (int e = 0; e < p.experts; ++e) {
      if (p.owner(e) != src)
        total += static_cast<double>(rows[static_cast<std::size_t>(src)][static_cast<std::size_t>(e)]);
    }
  }
  return total * static_cast<double>(p.hidden) * p.element;
}
}  // namespace

double FlashPlan::network_bytes() const {
  return bytes_off_rank(*this, rows);
}
double FlashPlan::routed_network_bytes() const {
  return bytes_off_rank(*this, routed);
}
double FlashPlan::padded_network_bytes() const {
  if (capacity_per_source == 0) return 0;
  auto full = routed;
  for (auto& row : full) std::fill(row.begin(), row.end(), capacity_per_source);
  return bytes_off_rank(*this, full);
}

int option_int(const Scenario& s, const std::string& key, int fallback, int lo, int hi) {
  auto it = s.options.find(key);
  if (it == s.options.end()) return fallback;
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || v < lo || v > hi) {
    throw ConfigError("", "--opt",
                      key + "=" + it->second + ": expected an integer in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
  }
  return v;
}

std::string option_choice(const Scenario& s, const std::string& key,
                          const std::vector<std::string>& choices) {
  auto it = s.options.find(key);
  if (it == s.options.end()) return choices.front();
  if (std::find(choices.begin(), choices.end(), it->second) != choices.end()) return it->second;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
  throw ConfigError("", "--opt", key + "=" + it->second + ": expected " + list);
}

BuiltProgram flash_result(const Scenario& s, const FlashPlan& plan, FlashBuilt built) {
  BuiltProgram out;
  out.program = std::move(built.program);
  out.flops_rank0 = built.flops_rank0;
  out.layers = 1;
  out.tokens_per_step = static_cast<double>(s.workload.tokens) * s.parallel.ep;
  FigureGroup g;
  g.key = "flashmoe";
  g.in_metrics = true;
  g.values = {{"kernels_per_rank", std::int64_t{built.kernels_per_rank}},
              {"dispatch_bytes", plan.network_bytes()},
              {"dispatch_routed_bytes", plan.routed_network_bytes()},
              {"dispatch_padded_bytes", plan.padded_network_bytes()},
              {"symmetric_tensor_bytes", built.symmetric_tensor_bytes}};
  out.figures.push_back(std::move(g));
  return out;
}

void validate_flash(const Scenario& s) {
  if (s.workload.phase != Phase::FORWARD)
    throw ConfigError("", "--phase",
                      "= " + to_string(s.workload.phase) + ": --schedule " + s.schedule +
                          " models one MoE layer's forward pass: use --phase forward");
  if (s.parallel.moe_comm != MoeComm::ALLTOALL || s.parallel.tp != 1)
    throw ScheduleError("--schedule " + s.schedule +
                        " models expert parallelism with all-to-all MoE and no attention TP: use --moe-comm "
                        "alltoall --tp 1");
}

std::vector<FigureGroup> flash_summary(const SimulationResult& r) {
  const FigureGroup* g = r.figure_group("flashmoe");
  if (g == nullptr) return {};
  FigureGroup line;
  line.summary.push_back(
      fmt::format("# FlashMoE ({}): {} GPU ops/rank/layer, SM util {:.1f}%, Dispatch {:.4g} MB sent "
                  "(payload-efficient {:.4g}, "
                  "padded {:.4g}), symmetric tensor {:.4g} GiB/GPU",
                  r.scenario.schedule, static_cast<std::int64_t>(g->number("kernels_per_rank").value_or(0)),
                  r.sm_util_pct, g->number("dispatch_bytes").value_or(0) / 1e6,
                  g->number("dispatch_routed_bytes").value_or(0) / 1e6,
                  g->number("dispatch_padded_bytes").value_or(0) / 1e6,
                  g->number("symmetric_tensor_bytes").value_or(0) / (1024.0 * 1024 * 1024)));
  return {line};
}

}  // namespace detail
}  // namespace moesim::schedules
