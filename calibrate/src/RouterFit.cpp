// efficiency.router_topk of a calibrated profile from contention_bench's router top-k runs.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/Fitting.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate::detail {
namespace {

struct TopkCases {
  std::int64_t experts = 0;
  std::vector<const ContentionCase*> cases;
};

// Alone times by token count, from one-GPU runs where there are any: one host thread feeding four GPUs
// added about 4 us to the shortest top-k kernels (2026-11-22 router data, 6.0 us on one GPU, 10.2 on four).
std::map<std::int64_t, std::vector<double>> alone_times(const std::vector<const ContentionCase*>& cases) {
  const bool single = std::any_of(cases.begin(), cases.end(), [](auto* k) { return k->ranks == 1; });
  std::map<std::int64_t, std::vector<double>> by_tokens;
  for (const ContentionCase* k : cases) {
    if (!single || k->ranks == 1) by_tokens[k->tokens].push_back(k->compute_alone_s);
  }
  return by_tokens;
}

// The top-k runs by top_k, each at one expert count; `files` collects their files.
std::map<std::int64_t, TopkCases> group_by_top_k(const std::vector<ContentionCase>& contention,
                                                 std::set<std::string>& files) {
  std::map<std::int64_t, TopkCases> by_k;
  for (const ContentionCase& k : contention) {
    if (k.compute != "topk") continue;
    files.insert(k.file);
    TopkCases& group = by_k[k.top_k];
    if (group.experts != 0 && group.experts != k.experts) {
      throw ConfigError(k.file, "/options/experts",
                        "= " + std::to_string(k.experts) + ": top_k " + std::to_string(k.top_k) +
                            " was measured at " + std::to_string(group.experts) +
                            " experts too; the router table keeps one expert count per top_k");
    }
    group.experts = k.experts;
    group.cases.push_back(&k);
  }
  return by_k;
}

}  // namespace

bool beside_nccl(const ContentionCase& k) {
  return k.ranks > 1 && profile_kind(k.comm) && k.compute_with_comm_s && k.comm_with_compute_s;
}

/*
 * Per top_k (one expert count each):
 *   - fixed_us and ns_per_token: least-squares line through the p50 alone times (geometric mean per token
 *     count) against tokens; through the origin where the intercept comes out negative;
 *   - comm_slowdown: geometric mean over the NCCL cases of slowdown / (SMs / (SMs - held)), at least 1;
 *   - comm_drag: geometric mean over the same cases of (collective beside the top-k stream - half a top-k)
 *     / collective alone, at least 1 (a collective waits for the running kernel to end, half of one on
 *     average, as comm_slowdown_with_compute's fit takes it).
 */
void fit_router_topk(Context& c) {
  hw::HwProfile& p = c.out.profile;
  std::set<std::string> files;
  const std::map<std::int64_t, TopkCases> by_k = group_by_top_k(c.in.bench.contention, files);
  if (by_k.empty()) return;
  const double sms = p.gpu.sm_count;
  hw::RouterTopkTable table;
  ErrorSummary alone_e, with_e;
  std::string points;
  for (const auto& [top_k, group] : by_k) {
    std::vector<double> tokens, times;
    for (const auto& [n, values] : alone_times(group.cases)) {
      tokens.push_back(static_cast<double>(n));
      times.push_back(geometric_mean(values));
    }
    LineFit line = fit_line(tokens, times);
    if (line.intercept < 0) line = {0.0, slope_through_origin(tokens, times)};
    std::vector<double> slowdowns, drags;
    std::vector<std::pair<const ContentionCase*, double>> stretched;  // NCCL cases and their SM stretch
    for (const ContentionCase* k : group.cases) {
      if (!beside_nccl(*k)) continue;
      const double stretch = sms / (sms - held_sms(*k, p.contention));
      stretched.emplace_back(k, stretch);
      slowdowns.push_back(*k->compute_with_comm_s / k->compute_alone_s / stretch);
      drags.push_back((*k->comm_with_compute_s - k->compute_alone_s / 2) / k->comm_alone_s);
    }
    table.top_k.push_back(static_cast<double>(top_k));
    table.experts.push_back(static_cast<double>(group.experts));
    table.fixed_s.push_back(round4(line.intercept * 1e6) * 1e-6);
    table.s_per_token.push_back(round4(line.slope * 1e9) * 1e-9);
    // Unmeasured beside NCCL: the platform's factors, as any compute kernel gets.
    table.comm_slowdown.push_back(slowdowns.empty() ? p.contention.compute_slowdown_with_comm
                                                    : round4(std::max(1.0, geometric_mean(slowdowns))));
    table.comm_drag.push_back(drags.empty() ? p.contention.comm_slowdown_with_compute
                                            : round4(std::max(1.0, geometric_mean(drags))));
    for (std::size_t i = 0; i < tokens.size(); ++i)
      alone_e.add(table.fixed_s.back() + table.s_per_token.back() * tokens[i], times[i]);
    for (const auto& [k, stretch] : stretched)
      with_e.add(k->compute_alone_s * stretch * table.comm_slowdown.back(), *k->compute_with_comm_s);
    points += " k " + std::to_string(top_k) + " (" + std::to_string(group.experts) + " experts, " +
              std::to_string(tokens.size()) + " token counts, " + std::to_string(slowdowns.size()) +
              " NCCL cases): " + fixed(table.fixed_s.back() * 1e6, 2) + " us + " +
              num(table.s_per_token.back() * 1e9, 4) + " ns/token, comm_slowdown " +
              num(table.comm_slowdown.back(), 4) +
              (slowdowns.empty() ? "" : " (" + range_text(slowdowns) + ")") + ", comm_drag " +
              num(table.comm_drag.back(), 4) + (drags.empty() ? "" : " (" + range_text(drags) + ")") + ";";
  }
  points.back() = '.';
  table.source =
      "contention_bench --compute topk " + c.tags.tags_of(files) +
      ": the layer runner's router softmax + top-k (one warp per token, an atomic count per "
      "choice). Per top_k: p50 alone against tokens, least-squares line (one-GPU runs where there "
      "are any: one host thread feeding four GPUs lengthens the shortest kernels); comm_slowdown = "
      "geometric mean of slowdown beside NCCL / (" +
      std::to_string(p.gpu.sm_count) +
      " / (SMs - CTAs or comm_sms)); comm_drag = geometric mean of (collective beside the top-k "
      "stream - half a top-k) / collective alone; both at least 1; with no NCCL case, "
      "compute_slowdown_with_comm and comm_slowdown_with_compute." +
      points;
  p.efficiency.router_topk = std::move(table);
  add_residual(c, "router topk alone", alone_e,
               "p50 alone vs fixed + per-token line, per top_k and token count");
  if (with_e.points > 0)
    add_residual(c, "router topk comm", with_e, "top-k beside NCCL vs alone x SM stretch x comm_slowdown");
  c.calibrated_parts.push_back("router top-k");
}

}  // namespace moesim::calibrate::detail
