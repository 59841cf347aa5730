#include "UntracedForms.hpp"

#include <algorithm>
#include <sstream>

namespace moesim::calibrate::detail {
namespace {

std::string two_decimals(double v) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << v;
  return out.str();
}

bool has_multi_rank_steps(const cost::ImplOpEntry& e) {
  return std::any_of(e.steps.begin(), e.steps.end(),
                     [](const cost::ImplStep& s) { return s.when == cost::ImplCondition::MULTI_RANK; });
}

double host_ns_of(const cost::ImplOpEntry& e) {
  double host = 0;
  for (const cost::ImplStep& s : e.steps) host += s.host_ns;
  return host;
}

// The traced host's speed against the base profile's, per pass: learned over base host time summed over the
// ops that run alike at every EP degree in the base and once per call in both (a loop's per-expert steps
// count differently); 1 where no op qualifies.
double host_ratio(const cost::ImplementationProfile& p, cost::ImplPass pass) {
  auto once = [](const cost::ImplOpEntry& e) {
    return std::all_of(e.steps.begin(), e.steps.end(),
                       [](const cost::ImplStep& s) { return s.repeat == cost::ImplRepeat::ONCE; });
  };
  double learned = 0, base = 0;
  for (const cost::ImplOpEntry& e : p.ops) {
    if (e.pass != pass || e.steps.empty() || !once(e)) continue;
    const cost::ImplOpEntry* b = p.base->find(e.op, pass, e.attention.value_or(models::AttentionType::GQA));
    if (b == nullptr || b->steps.empty() || has_multi_rank_steps(*b) || !once(*b)) continue;
    learned += host_ns_of(e);
    base += host_ns_of(*b);
  }
  return learned > 0 && base > 0 ? learned / base : 1;
}

}  // namespace

void complete_for_other_ep(cost::ImplementationProfile& p, const std::vector<int>& entry_ep,
                           std::vector<std::string>& notes) {
  const double ratio[2] = {host_ratio(p, cost::ImplPass::FORWARD), host_ratio(p, cost::ImplPass::BACKWARD)};
  std::vector<std::string> completed;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    cost::ImplOpEntry& e = p.ops[i];
    const cost::ImplOpEntry* b = p.base->find(e.op, e.pass, e.attention.value_or(models::AttentionType::GQA));
    if (b == nullptr || !has_multi_rank_steps(*b)) continue;
    const double scale = ratio[e.pass == cost::ImplPass::BACKWARD ? 1 : 0];
    auto added = [&](cost::ImplStep step, cost::ImplCondition when) {
      step.when = when;
      step.host_ns *= scale;
      step.host_ns_per_chunk *= scale;
      for (const cost::ImplStep& traced : e.steps)
        if (step.kind == cost::ImplStepKind::GEMM && traced.kind == cost::ImplStepKind::GEMM &&
            traced.gemm == step.gemm) {
          step.efficiency = traced.efficiency;
          step.kernel_overhead_ns = traced.kernel_overhead_ns;
          step.grouped = traced.grouped;  // its rate and cost per launch hold for the traced step's pricing
        }
      return step;
    };
    std::vector<cost::ImplStep> steps;
    if (entry_ep[i] > 1) {
      for (cost::ImplStep s : e.steps) {
        if (s.when == cost::ImplCondition::ALWAYS) s.when = cost::ImplCondition::MULTI_RANK;
        steps.push_back(s);
      }
      for (const cost::ImplStep& s : b->steps)
        if (s.when == cost::ImplCondition::ALWAYS)
          steps.push_back(added(s, cost::ImplCondition::SINGLE_RANK));
    } else {
      const auto first_other = std::find_if(b->steps.begin(), b->steps.end(), [](const cost::ImplStep& s) {
        return s.when != cost::ImplCondition::MULTI_RANK;
      });
      for (auto it = b->steps.begin(); it != first_other; ++it)
        steps.push_back(added(*it, cost::ImplCondition::MULTI_RANK));
      steps.insert(steps.end(), e.steps.begin(), e.steps.end());
      for (auto it = first_other; it != b->steps.end(); ++it)
        if (it->when == cost::ImplCondition::MULTI_RANK)
          steps.push_back(added(*it, cost::ImplCondition::MULTI_RANK));
    }
    e.steps = std::move(steps);
    completed.push_back(models::to_string(e.op) + (e.pass == cost::ImplPass::BACKWARD ? " backward" : ""));
  }
  if (completed.empty()) return;
  std::string list;
  for (const std::string& c : completed) list += (list.empty() ? "" : ", ") + c;
  notes.push_back("at the EP degree the traces did not run, " + list + " take the form of " + p.base->name +
                  " (host x " + two_decimals(ratio[0]) + " forward, x " + two_decimals(ratio[1]) +
                  " backward)");
}

void add_untraced_feature_steps(cost::ImplementationProfile& p, const std::vector<models::ModelSpec>& traced,
                                std::vector<std::string>& notes) {
  std::vector<std::pair<cost::ImplCondition, const char*>> untraced;
  if (std::none_of(traced.begin(), traced.end(), [](const auto& m) { return m.attention.qk_norm; }))
    untraced.emplace_back(cost::ImplCondition::QK_NORM, "qk_norm");
  if (std::none_of(traced.begin(), traced.end(), [](const auto& m) { return m.moe.shared_gate; }))
    untraced.emplace_back(cost::ImplCondition::SHARED_GATE, "shared_gate");
  const double ratio[2] = {host_ratio(p, cost::ImplPass::FORWARD), host_ratio(p, cost::ImplPass::BACKWARD)};
  std::string added;
  for (cost::ImplOpEntry& e : p.ops) {
    const cost::ImplOpEntry* b = p.base->find(e.op, e.pass, e.attention.value_or(models::AttentionType::GQA));
    if (b == nullptr) continue;
    for (const auto& [when, name] : untraced) {
      int count = 0;
      for (cost::ImplStep s : b->steps) {
        if (s.when != when) continue;
        s.host_ns *= ratio[e.pass == cost::ImplPass::BACKWARD ? 1 : 0];
        e.steps.push_back(s);
        ++count;
      }
      if (count > 0)
        added += (added.empty() ? "" : ", ") + models::to_string(e.op) +
                 (e.pass == cost::ImplPass::BACKWARD ? " backward " : " ") + std::to_string(count) + " " +
                 name;
    }
  }
  if (!added.empty())
    notes.push_back("no traced model has every feature the base profile " + p.base->name +
                    " charges; its steps for them are added: " + added);
}

}  // namespace moesim::calibrate::detail
