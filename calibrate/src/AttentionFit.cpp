// The attention curves (fused from PyTorch SDPA or our kernel, unfused for the layer runner) and backward
// factor.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"

namespace moesim::calibrate::detail {
namespace {

// FlashAttention's backward runs 5 matmuls to the forward's 2 (models/src/LayerOps.cpp uses the same 2.5).
constexpr double kAttentionBackwardFlops = 2.5;

double attention_forward_flops(const AttentionCase& a) {
  return 2.0 * static_cast<double>(a.batch_heads) * (static_cast<double>(a.seq_len) * a.seq_len / 2.0) *
         static_cast<double>(a.d_qk + a.d_v);
}

// The layer runner computes attention unfused; its validation needs that implementation's own curve.
// Unfused time is set by the L×L score matrices, not by the head dims, so a FLOP efficiency depends on
// d_qk + d_v: only the MHA/GQA cases (d_qk = d_v), the runner's geometry, enter the curve.
bool runner_geometry(const AttentionCase& a) {
  return a.impl == "unfused" && a.forward && a.d_qk == a.d_v;
}

void fit_unfused_attention(Context& c) {
  hw::HwProfile& p = c.out.profile;
  const double sustained = p.sustained_peak_flops("bf16");
  std::map<std::int64_t, std::vector<double>> by_seq;
  for (const AttentionCase& a : c.in.bench.attention) {
    if (runner_geometry(a)) by_seq[a.seq_len].push_back(attention_forward_flops(a) / a.time_s / sustained);
  }
  if (by_seq.empty()) return;
  hw::EfficiencyCurve& curve = p.efficiency.attention_unfused_fwd;
  curve = {};
  ErrorSummary residual;
  for (const auto& [seq, effs] : by_seq) {
    curve.x.push_back(static_cast<double>(seq));
    curve.value.push_back(round4(geometric_mean(effs)));
  }
  for (const AttentionCase& a : c.in.bench.attention) {
    if (!runner_geometry(a)) continue;
    const double model =
        p.attention_efficiency(a.seq_len, hw::AttentionPass::FORWARD, hw::AttentionImpl::UNFUSED);
    residual.add(attention_forward_flops(a) / (sustained * model), a.time_s);
  }
  add_residual(c, "attention fwd (unfused)", residual, "time vs the attention_unfused_fwd curve");
  curve.source = "Unfused causal attention forward (cuBLASLt QK^T, causal softmax, PV) of attention_bench " +
                 files_tags(c, "attention") +
                 ", p50, the implementation the in-tree layer runner uses: efficiency " +
                 "= 2 x BH x (L^2/2) x (d_qk + d_v) / (time x " + num(sustained / 1e12, 4) +
                 " TF/s), geometric mean over the cases with d_qk = d_v (MHA/GQA, as the runner; the time "
                 "is set by the L x L scores, so MLA's wider d_qk would read as a higher FLOP efficiency) at "
                 "each measured L; clamped outside L " +
                 num(curve.x.front(), 6) + ".." + num(curve.x.back(), 6) + "." + c.clock_text["attention"];
}

// Best implementation per shape and pass: PyTorch SDPA's when there is any, else our kernel's.
using ShapeKey = std::tuple<bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

struct AttentionChoice {
  bool have_torch = false;
  std::map<ShapeKey, const AttentionCase*> best;
  std::vector<double> unfused_fwd_tflops;  // our unfused kernel's forward rates, for the source text
};

AttentionChoice choose_cases(const std::vector<AttentionCase>& cases) {
  AttentionChoice choice;
  choice.have_torch = std::any_of(cases.begin(), cases.end(),
                                  [](const AttentionCase& a) { return a.impl.rfind("torch:", 0) == 0; });
  for (const AttentionCase& a : cases) {
    if (a.impl == "unfused" && a.forward)
      choice.unfused_fwd_tflops.push_back(attention_forward_flops(a) / a.time_s / 1e12);
    if ((a.impl.rfind("torch:", 0) == 0) != choice.have_torch) continue;
    ShapeKey key{a.forward, a.batch_heads, a.seq_len, a.d_qk, a.d_v};
    auto it = choice.best.find(key);
    if (it == choice.best.end() || a.time_s < it->second->time_s) choice.best[key] = &a;
  }
  return choice;
}

// The source text of the fused forward curve: how it was measured and what it inherits from the base.
std::string forward_source(Context& c, const AttentionChoice& choice, const std::set<std::string>& winners,
                           double sustained, const std::vector<CurvePoint>& measured,
                           const MergedCurve& merged) {
  std::string impls;
  for (const std::string& w : winners) impls += (impls.empty() ? "" : ", ") + w;
  const std::string tags = choice.have_torch ? files_tags(c, "torch_sdpa") : files_tags(c, "attention");
  std::string source =
      "Causal attention forward " + tags + ", p50: efficiency = 2 x BH x (L^2/2) x (d_qk + d_v) / " +
      "(time x " + num(sustained / 1e12, 4) + " TF/s sustained bf16 peak), geometric mean over " +
      "head dims (128/128, 192/128 MLA) at each L; fastest implementation per shape (" + impls + "). ";
  if (choice.have_torch) {
    source +=
        "Taken from PyTorch SDPA because our attention_bench kernel" +
        (choice.unfused_fwd_tflops.empty() ? std::string()
                                           : " " + files_tags(c, "attention") + " (" +
                                                 range_text(choice.unfused_fwd_tflops) + " TF/s forward)") +
        " is unfused (cuBLASLt GEMMs + softmax kernels) and does not represent the fused kernels training "
        "runs use. ";
  } else {
    source +=
        "From attention_bench, an UNFUSED kernel (cuBLASLt GEMMs + softmax kernels): it understates what "
        "fused FlashAttention/cuDNN kernels reach; give torch_sdpa_compare.py results to replace it. ";
  }
  source += "Measured L " + num(measured.front().x, 6) + ".." + num(measured.back().x, 6);
  if (merged.inherited_points > 0) {
    source += "; " + inherited_points_text(merged.inherited_points, "that range", merged.scale_low,
                                           merged.scale_high);
  }
  return source + "." + (choice.have_torch ? "" : c.clock_text["attention"]);
}

// The cases' efficiency (FLOPs x flops_scale over the forward's) per length of equal work against `reference`
// sequences x heads, geometric mean at each length.
std::vector<CurvePoint> equal_work_points(const std::vector<const AttentionCase*>& cases,
                                          std::int64_t reference, double flops_scale, double sustained) {
  std::map<double, std::vector<double>> by_length;
  for (const AttentionCase* a : cases) {
    const double length =
        std::round(hw::equal_work_seq(static_cast<double>(a->seq_len), a->batch_heads, reference));
    by_length[length].push_back(flops_scale * attention_forward_flops(*a) / a->time_s / sustained);
  }
  std::vector<CurvePoint> points;
  for (const auto& [length, effs] : by_length) points.push_back({length, geometric_mean(effs)});
  return points;
}

// attention_fwd from the chosen forward cases, merged into the base curve; false when none was measured.
bool fit_forward_curve(Context& c, const AttentionChoice& choice, double sustained) {
  hw::HwProfile& p = c.out.profile;
  // With several sequences x heads measured, the curve is read at the length of equal work
  // (HwProfile::attention_efficiency): cases with more than the fewest sit at a longer equivalent length.
  // With one, it stays a curve over L (batch_heads unset), as profiles calibrated before had it.
  std::set<std::int64_t> measured_batch_heads;
  for (const auto& [key, a] : choice.best)
    if (a->forward && a->batch_heads > 0) measured_batch_heads.insert(a->batch_heads);
  const std::int64_t reference = measured_batch_heads.size() > 1 ? *measured_batch_heads.begin() : 0;
  std::vector<const AttentionCase*> forward;
  std::set<std::string> winners;
  for (const auto& [key, a] : choice.best) {
    winners.insert(a->impl);
    if (a->forward) forward.push_back(a);
  }
  if (forward.empty()) return false;
  const std::vector<CurvePoint> measured = equal_work_points(forward, reference, 1.0, sustained);
  const MergedCurve merged =
      merge_curve(p.efficiency.attention_fwd.x, p.efficiency.attention_fwd.value, measured);
  p.efficiency.attention_fwd.x = merged.x;
  p.efficiency.attention_fwd.value.clear();
  for (double v : merged.value) p.efficiency.attention_fwd.value.push_back(round4(v));
  p.efficiency.attention_fwd.batch_heads = reference;
  p.efficiency.attention_fwd.source = forward_source(c, choice, winners, sustained, measured, merged);
  if (reference > 0)
    p.efficiency.attention_fwd.source +=
        " Read at the length of equal causal work for " + std::to_string(reference) +
        " sequences x heads per call (batch_heads): L x sqrt(BH / " + std::to_string(reference) + ").";
  return true;
}

// attention_bwd: the backward cases' efficiency per length of equal work, as the forward curve is made;
// outside the measured lengths the forward curve times the factor, scaled to meet the measured edge.
void fit_backward_curve(Context& c, const std::vector<const AttentionCase*>& cases, double sustained,
                        const std::string& tags) {
  hw::HwProfile& p = c.out.profile;
  const std::int64_t reference = p.efficiency.attention_fwd.batch_heads;
  const std::vector<CurvePoint> measured =
      equal_work_points(cases, reference, kAttentionBackwardFlops, sustained);
  std::vector<double> base = p.efficiency.attention_fwd.value;
  for (double& v : base) v *= p.efficiency.attention_bwd_factor;
  const MergedCurve merged = merge_curve(p.efficiency.attention_fwd.x, base, measured);
  hw::EfficiencyCurve& curve = p.efficiency.attention_bwd;
  curve = {};
  curve.x = merged.x;
  for (double v : merged.value) curve.value.push_back(round4(v));
  curve.batch_heads = reference;
  curve.source =
      "Causal attention backward " + tags + ", p50: efficiency = 2.5 x the forward FLOPs / (time x " +
      num(sustained / 1e12, 4) + " TF/s), geometric mean over head dims at each L of equal work, " +
      "as attention_fwd; the rate does not follow the forward's (its backward / forward time falls " +
      "with L). Measured L " + num(measured.front().x, 6) + ".." + num(measured.back().x, 6);
  if (merged.inherited_points > 0)
    curve.source += "; " + inherited_points_text(merged.inherited_points,
                                                 "that range (attention_fwd x "
                                                 "attention_bwd_factor)",
                                                 merged.scale_low, merged.scale_high);
  curve.source += ".";
}

// The forward residual, and attention_bwd_factor from the backward cases against the forward curve.
void fit_backward_factor(Context& c, const AttentionChoice& choice, double sustained) {
  hw::HwProfile& p = c.out.profile;
  ErrorSummary fwd, bwd;
  std::vector<double> bwd_ratios;
  std::vector<const AttentionCase*> bwd_cases;
  for (const auto& [key, a] : choice.best) {
    const double model_fwd = p.attention_efficiency(a->seq_len, hw::AttentionPass::FORWARD,
                                                    hw::AttentionImpl::FUSED, a->batch_heads);
    if (a->forward) {
      fwd.add(attention_forward_flops(*a) / (sustained * model_fwd), a->time_s);
    } else {
      const double measured_eff =
          kAttentionBackwardFlops * attention_forward_flops(*a) / a->time_s / sustained;
      bwd_ratios.push_back(measured_eff / model_fwd);
      bwd_cases.push_back(a);
    }
  }
  add_residual(c, "attention fwd", fwd, "time vs the attention_fwd curve");
  if (bwd_ratios.empty()) return;
  const double raw = geometric_mean(bwd_ratios);
  p.efficiency.attention_bwd_factor = round4(std::min(1.0, raw));
  const std::string tags = choice.have_torch ? files_tags(c, "torch_sdpa") : files_tags(c, "attention");
  p.efficiency.source += " Calibrated " + tags + ": attention_bwd_factor " +
                         num(p.efficiency.attention_bwd_factor, 4) + " = geometric mean over " +
                         std::to_string(bwd_ratios.size()) +
                         " backward shapes of (2.5 x forward FLOPs / time) / the forward curve at that L" +
                         (raw > 1 ? " (" + num(raw, 4) + ", capped at 1)" : "") +
                         " (unfused attention's backward; fused attention's has attention_bwd).";
  fit_backward_curve(c, bwd_cases, sustained, tags);
  for (const AttentionCase* a : bwd_cases) {
    bwd.add(kAttentionBackwardFlops * attention_forward_flops(*a) /
                (sustained * p.attention_efficiency(a->seq_len, hw::AttentionPass::BACKWARD,
                                                    hw::AttentionImpl::FUSED, a->batch_heads)),
            a->time_s);
  }
  add_residual(c, "attention bwd", bwd, "time vs the attention_bwd curve");
}

}  // namespace

void fit_attention(Context& c) {
  fit_unfused_attention(c);
  const AttentionChoice choice = choose_cases(c.in.bench.attention);
  if (choice.best.empty()) return;
  const double sustained = c.out.profile.sustained_peak_flops("bf16");
  if (!fit_forward_curve(c, choice, sustained)) return;
  fit_backward_factor(c, choice, sustained);
  c.calibrated_parts.push_back(choice.have_torch ? "attention (PyTorch SDPA)" : "attention (unfused kernel)");
}

namespace {
// A full causal call's cost per score pair: batch sequences of seq^2 / 2 pairs a head.
double cost_per_pair(const WindowAttentionCase& w) {
  const auto seq = static_cast<double>(w.seq);
  return w.forward_s / (static_cast<double>(w.batch) * seq * seq / 2.0);
}
}  // namespace

// A row of queries costs a fused kernel `a` keys beyond its pairs (edge tiles, the row's start and end): a
// pair in a row of k keys costs (1 + a / k) of one in an endless row. Full causal rows hold L / 2 keys on
// average, so per shape and backend the shortest and longest calls of equal tokens give (1 + 2a / Lmin) = R
// (1 + 2a / Lmax), R their ratio of cost per pair. Only full causal calls are fitted: the windowed ones are
// left to check it.
void fit_attention_rows(Context& c) {
  std::map<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>,
           std::vector<const WindowAttentionCase*>>
      shapes;
  for (const WindowAttentionCase& w : c.in.bench.window_attention) {
    if (w.window_kind == "full") shapes[{w.backend, w.heads, w.head_dim, w.batch * w.seq}].push_back(&w);
  }
  std::set<std::string> windowed_backends;
  for (const WindowAttentionCase& w : c.in.bench.window_attention)
    if (w.window_kind != "full") windowed_backends.insert(w.backend);
  std::vector<double> overheads;
  std::string per_shape;
  for (auto& [key, calls] : shapes) {
    const auto& [backend, heads, head_dim, tokens] = key;
    if (!windowed_backends.count(backend) || calls.size() < 2) continue;  // the kernels that run windows
    const auto [shortest, longest] = std::minmax_element(
        calls.begin(), calls.end(), [](const auto* a, const auto* b) { return a->seq < b->seq; });
    const double ratio = cost_per_pair(**shortest) / cost_per_pair(**longest);
    const double a = (ratio - 1) / (2.0 / static_cast<double>((*shortest)->seq) -
                                    2.0 * ratio / static_cast<double>((*longest)->seq));
    if (!(a > 0)) continue;  // no longer per pair at the shorter rows: nothing to fit
    overheads.push_back(a);
    per_shape += std::string(per_shape.empty() ? "" : "; ") + backend + " " + std::to_string(heads) +
                 " heads x " + std::to_string(head_dim) + ": R " + num((*shortest)->seq, 5) + " / " +
                 num((*longest)->seq, 5) + " = " + num(ratio, 4) + ", a " + num(a, 3);
  }
  if (overheads.empty()) return;
  hw::AttentionRows& rows = c.out.profile.efficiency.attention_rows;
  double sum = 0;
  for (double a : overheads) sum += a;
  rows.overhead_keys = std::round(sum / static_cast<double>(overheads.size()));
  rows.source =
      "Fused attention's cost of a row of queries beyond its score pairs, " + num(rows.overhead_keys, 4) +
      " keys: the mean over " + std::to_string(overheads.size()) + " shapes of torch_window_attention " +
      files_tags(c, "torch_window_attention") +
      "'s full causal calls of equal tokens, each shape's shortest and longest sequence (rows of L / 2 "
      "keys): (1 + 2a / Lmin) = R (1 + 2a / Lmax), R their ratio of time per score pair (" +
      per_shape + "). The windowed calls of the same runs are not fitted.";
  c.calibrated_parts.push_back("attention rows (windowed attention)");
}

}  // namespace moesim::calibrate::detail
