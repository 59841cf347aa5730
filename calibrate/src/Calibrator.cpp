#include "moesim/calibrate/Calibrator.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/CollectiveFit.hpp"
#include "moesim/calibrate/Fitting.hpp"
#include "moesim/calibrate/PowerFit.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

using namespace detail;
using hw::CollectiveKind;
using hw::CollectiveScope;

// FlashAttention's backward runs 5 matmuls to the forward's 2 (models/src/LayerOps.cpp uses the same 2.5).
constexpr double kAttentionBackwardFlops = 2.5;
constexpr double kMemoryBinFactor = 4.0;

// --- provenance --------------------------------------------------------------------------------

void check_same_gpu(Context& c) {
  for (const RunInfo& r : c.in.bench.runs) {
    if (r.sm_count > 0 && r.sm_count != c.base.gpu.sm_count) {
      throw ConfigError(r.file, "/gpus/0/multiprocessors",
                        "= " + std::to_string(r.sm_count) + ": measured on " + r.gpu_name +
                            ", but the base profile '" + c.base.name + "' describes " + c.base.gpu.name +
                            " with " + std::to_string(c.base.gpu.sm_count) + " SMs");
    }
  }
}

void set_provenance(Context& c) {
  hw::Provenance& p = c.out.profile.provenance;
  p.kind = hw::ProvenanceKind::CALIBRATED;
  std::set<std::string> dates, drivers;
  std::map<std::string, std::string> libraries;
  std::string device;
  int most_gpus = 0;
  for (const RunInfo& r : c.in.bench.runs) {
    std::string what = r.benchmark + " on " + std::to_string(r.gpu_count) + "x " + r.gpu_name;
    if (!r.start_time.empty()) what += ", " + r.start_time;
    c.tags.tag(r.file, what);
    if (r.start_time.size() >= 10) dates.insert(r.start_time.substr(0, 10));
    if (!r.driver.empty()) {
      std::string d = r.driver + " (" + (r.gpu_api.empty() ? "driver" : r.gpu_api) + " driver API " +
                      r.driver_api + ", runtime " + r.runtime + ")";
      drivers.insert(d);
    }
    for (const auto& [name, version] : r.libraries) libraries[name] = version;
    if (r.gpu_count > most_gpus && !r.gpu_name.empty()) {
      most_gpus = r.gpu_count;
      device = std::to_string(r.gpu_count) + "x " + r.gpu_name;
      if (!r.gpu_arch.empty() || r.sm_count > 0)
        device += " (" + r.gpu_arch + (r.gpu_arch.empty() ? "" : ", ") + std::to_string(r.sm_count) + " SMs)";
    }
  }
  for (const NcclTestsLog& log : c.in.nccl_tests) {
    c.tags.tag(log.file, (log.program.empty() ? log.op : log.program) + " log on " +
                             std::to_string(log.ranks) + "x " + (log.device.empty() ? "GPU" : log.device) +
                             " (" + std::to_string(log.hosts) + " host" + (log.hosts > 1 ? "s" : "") + ")" +
                             (log.version.empty() ? "" : ", " + log.version));
    if (!log.version.empty())
      libraries[log.version.substr(0, log.version.find(' '))] = log.version.substr(log.version.find(' ') + 1);
    if (device.empty() && !log.device.empty()) device = std::to_string(log.ranks) + "x " + log.device;
  }
  for (const KinetoTrace& t : c.in.traces) c.tags.tag(t.file, "PyTorch profiler (Kineto) trace");
  auto join = [](const std::set<std::string>& items) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
    return out;
  };
  p.date = dates.empty() ? "undated (no kernels/ results file among the inputs)" : join(dates);
  p.device = device.empty() ? "not recorded by the inputs" : device;
  p.driver = drivers.empty() ? "not recorded by the inputs" : join(drivers);
  std::string libs;
  for (const auto& [name, version] : libraries) libs += (libs.empty() ? "" : ", ") + name + " " + version;
  p.libraries = libs.empty() ? "not recorded by the inputs" : libs;
}

// --- power and clocks ---------------------------------------------------------------------------

void fit_power_section(Context& c) {
  if (c.in.bench.power.empty()) return;
  hw::HwProfile& p = c.out.profile;
  const PowerFit fit = fit_power(c.in.bench.power, p.gpu.peak_flops, c.base.power, files_tags(c, "power"));
  p.power = fit.spec;
  for (const std::string& note : fit.notes) c.out.notes.push_back(note);
  ErrorSummary e;
  for (const PowerRun& run : c.in.bench.power) {
    for (const PowerLoad& load : run.loads) {
      auto peak = p.gpu.peak_flops.find(load.dtype);
      if (load.kind == "gemm" && peak == p.gpu.peak_flops.end()) continue;
      e.add(modelled_power_w(p.power, load, load.kind == "gemm" ? peak->second : 1.0), load.power_w);
    }
  }
  add_residual(c, "power", e,
               "board power vs idle + duty x model (GEMMs at their measured speed), every load");
  c.calibrated_parts.push_back("power model");
}

/**
 * With a power section (fitted or the base's), the efficiency tables describe the GPU at its maximum clock
 * and the power model lowers it: a case that NVML saw below the maximum clock is scaled to it by (max /
 * clock)^clock_rate_exponent before it is fitted. Sets c.clock_text (for the table sources) and a note.
 */
void scale_to_max_clock(Context& c, BenchResults& bench) {
  const hw::HwProfile& p = c.out.profile;
  const double max_clock = p.gpu.max_boost_clock_hz;
  const std::string clock = num(max_clock / 1e6, 4) + " MHz";
  int below = 0, at_max = 0, without = 0;
  std::map<std::string, std::vector<double>> factors;  // benchmark -> factor of each scaled case
  auto scale = [&](const char* benchmark, double& time_s, const std::optional<NvmlReading>& nvml) {
    if (!nvml) {
      ++without;
      return;
    }
    if (nvml->sm_clock_hz >= max_clock) {
      ++at_max;
      return;
    }
    ++below;
    if (!p.power.present) return;
    const double factor = max_clock_rate_factor(nvml->sm_clock_hz, max_clock, p.power.clock_rate_exponent);
    time_s /= factor;
    factors[benchmark].push_back(factor);
  };
  for (GemmCase& g : bench.gemm) scale("gemm", g.time_s, g.nvml);
  for (GroupedGemmCase& g : bench.grouped_gemm) scale("grouped_gemm", g.time_s, g.nvml);
  for (AttentionCase& a : bench.attention) scale("attention", a.time_s, a.nvml);
  auto mean_of = [](const std::vector<double>& values) {
    double mean = 0;
    for (double v : values) mean += v / static_cast<double>(values.size());
    return mean;
  };
  if (below + at_max + without == 0) return;
  if (!p.power.present) {
    if (below > 0) {
      c.out.notes.push_back(
          "clocks: " + std::to_string(below) + " GEMM/attention cases ran below the maximum clock " + clock +
          " (NVML), but without a power section (power_bench results, or a base profile that has "
          "one) their rates are used as measured");
    }
    return;
  }
  std::vector<double> all;
  for (const auto& [benchmark, values] : factors) all.insert(all.end(), values.begin(), values.end());
  c.out.notes.push_back(
      "clocks: " + std::to_string(all.size()) +
      " GEMM/grouped GEMM/attention cases ran below the maximum clock " + clock +
      " (NVML) and were scaled to it by (max / clock)^" + num(p.power.clock_rate_exponent, 4) +
      (all.empty() ? "" : ", mean factor " + num(mean_of(all), 4)) + "; " + std::to_string(at_max) +
      " ran at it; " + std::to_string(without) +
      " carry no NVML clock (files from before 0bb5f2e, torch SDPA) and are used as measured");
  for (const auto& [benchmark, values] : factors) {
    c.clock_text[benchmark] = " Rates scaled to the maximum clock " + clock + " by (" + clock +
                              " / the case's mean NVML SM clock)^clock_rate_exponent " +
                              num(p.power.clock_rate_exponent, 4) +
                              " (power section) before the fit: " + std::to_string(values.size()) + " " +
                              benchmark + " cases ran below it, mean factor " + num(mean_of(values), 4) +
                              "; cases without an NVML clock are used as measured. This describes the GPU at "
                              "its maximum clock; the power model lowers the clock.";
  }
}

// --- GEMM -------------------------------------------------------------------------------------

double gemm_flops(double m, double n, double k) {
  return 2.0 * m * n * k;
}

// Every measured bf16 (n, k) becomes a curve over its measured m, so that a shape the benchmark ran is
// simulated at its own rate rather than at the table's blend of shapes with the same min(n, k).
void fit_gemm_shapes(Context& c, double sustained) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::int64_t, std::vector<double>>> measured;
  for (const GemmCase& g : c.in.bench.gemm) {
    if (g.dtype == "bf16")
      measured[{g.n, g.k}][g.m].push_back(gemm_flops(g.m, g.n, g.k) / g.time_s / sustained);
  }
  hw::GemmShapeCurves& curves = c.out.profile.efficiency.gemm_shapes;
  curves.shapes.clear();
  std::size_t points = 0;
  for (const auto& [nk, by_m] : measured) {
    hw::GemmShapeCurve curve;
    curve.n = nk.first;
    curve.k = nk.second;
    for (const auto& [m, efficiencies] : by_m) {
      curve.m.push_back(static_cast<double>(m));
      curve.value.push_back(round4(std::min(1.0, geometric_mean(efficiencies))));
      ++points;
    }
    curves.shapes.push_back(std::move(curve));
  }
  curves.source =
      std::to_string(curves.shapes.size()) + " bf16 shapes (n, k) at " + std::to_string(points) +
      " measured m of gemm_bench " + files_tags(c, "gemm") +
      ", efficiency as for the table (geometric mean where a shape repeats). Between measured m "
      "the time is linear in m; below the smallest m the table's trend scaled to that m's "
      "efficiency (flat time below the table's first m); beyond the largest, that m's efficiency. "
      "Other shapes use the table.";
}

void fit_gemm(Context& c) {
  hw::HwProfile& p = c.out.profile;
  const double sustained = p.sustained_peak_flops("bf16");
  std::vector<ShapeSample> samples;
  for (const GemmCase& g : c.in.bench.gemm) {
    if (g.dtype != "bf16") continue;
    samples.push_back({static_cast<double>(g.m), static_cast<double>(std::min(g.n, g.k)),
                       gemm_flops(g.m, g.n, g.k) / g.time_s / sustained});
  }
  if (samples.empty()) return;
  auto& table = p.efficiency.gemm;
  table.value = fill_gemm_grid(table.m, table.min_nk, samples);
  for (auto& row : table.value) {
    for (double& v : row) v = round4(v);
  }
  std::set<double> ms;
  for (const ShapeSample& s : samples) ms.insert(s.m);
  table.source = "Filled from " + std::to_string(samples.size()) + " bf16 cuBLASLt GEMMs of gemm_bench " +
                 files_tags(c, "gemm") + " (p50, clocks not locked): efficiency = 2mnk / (time x " +
                 num(sustained / 1e12, 4) + " TF/s sustained bf16 peak); for each measured m (" +
                 std::to_string(ms.size()) +
                 " values) linear in log2 min(n,k) between the measured shapes and clamped beyond them, then "
                 "linear in log2 m between measured m; capped at 1." +
                 c.clock_text["gemm"];
  c.calibrated_parts.push_back("GEMM efficiency");
  fit_gemm_shapes(c, sustained);

  ErrorSummary bf16;
  std::map<std::string, std::vector<double>> dtype_ratios;
  std::map<std::string, std::vector<const GemmCase*>> dtype_cases;
  for (const GemmCase& g : c.in.bench.gemm) {
    const double model_eff = p.gemm_efficiency(g.m, g.n, g.k);
    if (g.dtype == "bf16") {
      bf16.add(gemm_flops(g.m, g.n, g.k) / (sustained * p.gemm_table_efficiency(g.m, g.n, g.k)), g.time_s);
    } else if (p.gpu.peak_flops.count(g.dtype)) {
      const double measured_eff = gemm_flops(g.m, g.n, g.k) / g.time_s / p.sustained_peak_flops(g.dtype);
      dtype_ratios[g.dtype].push_back(measured_eff / model_eff);
      dtype_cases[g.dtype].push_back(&g);
    }
  }
  add_residual(
      c, "gemm bf16", bf16,
      "time vs the table alone (bilinear in log m, log min(n,k)), what shapes outside gemm_shapes get");
  std::string factor_text;
  for (const auto& [dtype, ratios] : dtype_ratios) {
    const double raw = geometric_mean(ratios);
    const double factor = round4(std::min(1.0, raw));
    p.efficiency.gemm_dtype_factor[dtype] = factor;
    ErrorSummary e;
    for (const GemmCase* g : dtype_cases[dtype]) {
      e.add(gemm_flops(g->m, g->n, g->k) / p.achieved_gemm_flops(dtype, g->m, g->n, g->k), g->time_s);
    }
    add_residual(c, "gemm " + dtype, e, "time vs table x gemm_dtype_factor");
    factor_text += (factor_text.empty() ? "" : "; ") + dtype + " = " + num(factor, 4) +
                   ": geometric mean over " + std::to_string(ratios.size()) + " " + dtype +
                   " GEMMs of (rate / sustained " + dtype +
                   " peak) / bf16 table efficiency at the same shape" +
                   (raw > 1 ? " (" + num(raw, 4) + ", capped at 1)" : "");
  }
  if (!factor_text.empty()) {
    p.efficiency.source +=
        " Calibrated " + files_tags(c, "gemm") + ": gemm_dtype_factor " + factor_text + ".";
  }
}

void fit_grouped_gemm(Context& c) {
  hw::HwProfile& p = c.out.profile;
  const double sustained = p.sustained_peak_flops("bf16");
  std::vector<double> ratios;
  std::vector<const GroupedGemmCase*> used;
  int unfitted_cases = 0;
  for (const GroupedGemmCase& g : c.in.bench.grouped_gemm) {
    if (g.dtype != "bf16") continue;
    if (g.impl != "batched") {  // loop: one kernel per expert; grouped: cuBLAS's slower grouped call
      ++unfitted_cases;
      continue;
    }
    const double flops = gemm_flops(static_cast<double>(g.experts * g.tokens_per_expert), g.n, g.k);
    const double measured = flops / g.time_s / sustained;
    const double model = p.grouped_gemm_efficiency(g.tokens_per_expert, g.n, g.k, g.experts) /
                         p.efficiency.grouped_gemm_factor;
    ratios.push_back(measured / model);
    used.push_back(&g);
  }
  if (ratios.empty()) return;
  const double raw = geometric_mean(ratios);
  p.efficiency.grouped_gemm_factor = round4(std::min(1.0, raw));
  ErrorSummary e;
  for (const GroupedGemmCase* g : used) {
    const double flops = gemm_flops(static_cast<double>(g->experts * g->tokens_per_expert), g->n, g->k);
    e.add(flops / (sustained * p.grouped_gemm_efficiency(g->tokens_per_expert, g->n, g->k, g->experts)),
          g->time_s);
  }
  add_residual(c, "grouped_gemm bf16", e,
               "time of one strided-batched kernel vs factor x min(eff(E*T,n,k), eff(T,N,N))");
  p.efficiency.source +=
      " Calibrated " + files_tags(c, "grouped_gemm") + ": grouped_gemm_factor " +
      num(p.efficiency.grouped_gemm_factor, 4) + " = geometric mean over " + std::to_string(ratios.size()) +
      " one-kernel (strided-batched cuBLASLt) expert GEMMs of measured efficiency / "
      "min(eff(E*T, n, k), eff(T, N, N)) with the calibrated GEMM table" +
      (raw > 1 ? " (" + num(raw, 4) + ", capped at 1)" : "") + "; the " + std::to_string(unfitted_cases) +
      " other cases (one kernel per expert, or cuBLAS's grouped call) are not fitted." +
      c.clock_text["grouped_gemm"];
  c.calibrated_parts.push_back("grouped GEMM factor");
}

// --- attention ----------------------------------------------------------------------------------

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

void fit_attention(Context& c) {
  fit_unfused_attention(c);
  hw::HwProfile& p = c.out.profile;
  const bool have_torch = std::any_of(c.in.bench.attention.begin(), c.in.bench.attention.end(),
                                      [](const AttentionCase& a) { return a.impl.rfind("torch:", 0) == 0; });
  // Best implementation per shape and pass.
  using Key = std::tuple<bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, const AttentionCase*> best;
  std::vector<double> unfused_fwd_tflops;
  for (const AttentionCase& a : c.in.bench.attention) {
    if (a.impl == "unfused" && a.forward)
      unfused_fwd_tflops.push_back(attention_forward_flops(a) / a.time_s / 1e12);
    if ((a.impl.rfind("torch:", 0) == 0) != have_torch) continue;
    Key key{a.forward, a.batch_heads, a.seq_len, a.d_qk, a.d_v};
    auto it = best.find(key);
    if (it == best.end() || a.time_s < it->second->time_s) best[key] = &a;
  }
  if (best.empty()) return;
  const double sustained = p.sustained_peak_flops("bf16");
  std::map<std::int64_t, std::vector<double>> fwd_by_seq;
  std::set<std::string> winners;
  for (const auto& [key, a] : best) {
    winners.insert(a->impl);
    if (a->forward) fwd_by_seq[a->seq_len].push_back(attention_forward_flops(*a) / a->time_s / sustained);
  }
  if (fwd_by_seq.empty()) return;
  std::vector<CurvePoint> measured;
  for (const auto& [seq, effs] : fwd_by_seq)
    measured.push_back({static_cast<double>(seq), geometric_mean(effs)});
  const MergedCurve merged =
      merge_curve(p.efficiency.attention_fwd.x, p.efficiency.attention_fwd.value, measured);
  p.efficiency.attention_fwd.x = merged.x;
  p.efficiency.attention_fwd.value.clear();
  for (double v : merged.value) p.efficiency.attention_fwd.value.push_back(round4(v));

  std::string impls;
  for (const std::string& w : winners) impls += (impls.empty() ? "" : ", ") + w;
  const std::string tags = have_torch ? files_tags(c, "torch_sdpa") : files_tags(c, "attention");
  std::string source =
      "Causal attention forward " + tags + ", p50: efficiency = 2 x BH x (L^2/2) x (d_qk + d_v) / " +
      "(time x " + num(sustained / 1e12, 4) + " TF/s sustained bf16 peak), geometric mean over " +
      "head dims (128/128, 192/128 MLA) at each L; fastest implementation per shape (" + impls + "). ";
  if (have_torch) {
    source +=
        "Taken from PyTorch SDPA because our attention_bench kernel" +
        (unfused_fwd_tflops.empty()
             ? std::string()
             : " " + files_tags(c, "attention") + " (" + range_text(unfused_fwd_tflops) + " TF/s forward)") +
        " is unfused (cuBLASLt GEMMs + softmax kernels) and does not represent the fused kernels training "
        "runs use. ";
  } else {
    source +=
        "From attention_bench, an UNFUSED kernel (cuBLASLt GEMMs + softmax kernels): it understates what "
        "fused FlashAttention/cuDNN kernels reach; give torch_sdpa_compare.py results to replace it. ";
  }
  source += "Measured L " + num(measured.front().x, 6) + ".." + num(measured.back().x, 6);
  if (merged.inherited_points > 0) {
    source += "; the " + std::to_string(merged.inherited_points) +
              " base points outside that range keep the base curve's shape scaled to the measured edge (x" +
              num(merged.scale_low, 3) + " below, x" + num(merged.scale_high, 3) + " above)";
  }
  p.efficiency.attention_fwd.source = source + "." + (have_torch ? "" : c.clock_text["attention"]);

  ErrorSummary fwd, bwd;
  std::vector<double> bwd_ratios;
  std::vector<const AttentionCase*> bwd_cases;
  for (const auto& [key, a] : best) {
    const double model_fwd = p.attention_efficiency(a->seq_len, hw::AttentionPass::FORWARD);
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
  if (!bwd_ratios.empty()) {
    const double raw = geometric_mean(bwd_ratios);
    p.efficiency.attention_bwd_factor = round4(std::min(1.0, raw));
    for (const AttentionCase* a : bwd_cases) {
      bwd.add(kAttentionBackwardFlops * attention_forward_flops(*a) /
                  (sustained * p.attention_efficiency(a->seq_len, hw::AttentionPass::BACKWARD)),
              a->time_s);
    }
    add_residual(c, "attention bwd", bwd, "time vs attention_fwd x attention_bwd_factor");
    p.efficiency.source += " Calibrated " + tags + ": attention_bwd_factor " +
                           num(p.efficiency.attention_bwd_factor, 4) + " = geometric mean over " +
                           std::to_string(bwd_ratios.size()) +
                           " backward shapes of (2.5 x forward FLOPs / time) / the forward curve at that L" +
                           (raw > 1 ? " (" + num(raw, 4) + ", capped at 1)" : "") + ".";
  }
  c.calibrated_parts.push_back(have_torch ? "attention (PyTorch SDPA)" : "attention (unfused kernel)");
}

// --- memory -----------------------------------------------------------------------------------

void fit_memory(Context& c) {
  hw::HwProfile& p = c.out.profile;
  if (c.in.bench.memory.empty()) return;
  const double hbm = p.gpu.hbm_bw_Bps;
  std::vector<CurvePoint> points;
  std::vector<const MemoryCase*> kept;
  int dropped = 0;
  for (const MemoryCase& m : c.in.bench.memory) {
    const double efficiency = m.bytes / m.time_s / hbm;
    if (efficiency > 1.0) {
      ++dropped;
      continue;
    }
    points.push_back({m.bytes, efficiency});
    kept.push_back(&m);
  }
  if (points.empty()) return;
  const std::vector<CurvePoint> bins = bin_log(points, kMemoryBinFactor);
  const MergedCurve merged = merge_curve(p.efficiency.memory.x, p.efficiency.memory.value, bins);
  p.efficiency.memory.x.clear();
  for (double x : merged.x) p.efficiency.memory.x.push_back(std::round(x));
  p.efficiency.memory.value.clear();
  for (double v : merged.value) p.efficiency.memory.value.push_back(round4(v));
  std::string source = "memory_bench " + files_tags(c, "memory") +
                       " (copy, permute, unpermute, RMSNorm, SwiGLU, add; p50): "
                       "bytes / time / " +
                       num(hbm / 1e9, 5) + " GB/s datasheet HBM, " + std::to_string(points.size()) +
                       " cases in bins of 4x bytes (geometric-mean bytes, median efficiency)";
  if (dropped > 0)
    source += "; " + std::to_string(dropped) + " cases above the HBM peak (inputs resident in L2) left out";
  if (merged.inherited_points > 0) {
    source +=
        "; the " + std::to_string(merged.inherited_points) +
        " base points outside the measured bytes keep the base curve's shape scaled to the measured edge (x" +
        num(merged.scale_low, 3) + " below, x" + num(merged.scale_high, 3) + " above)";
  }
  p.efficiency.memory.source = source + ".";
  ErrorSummary e;
  for (const MemoryCase* m : kept) e.add(m->bytes / (hbm * p.memory_efficiency(m->bytes)), m->time_s);
  add_residual(
      c, "memory", e,
      "time vs bytes / (HBM x curve); " + std::to_string(dropped) + " L2-resident cases not compared");
  c.calibrated_parts.push_back("memory efficiency");
}

// --- collectives --------------------------------------------------------------------------------

struct GroupKey {
  CollectiveKind kind;
  CollectiveScope scope;
  int gpus;
  bool copy_engine = false;  ///< collectives_bench's ce_all_to_all (cudaMemcpyPeerAsync)
  bool operator<(const GroupKey& o) const {
    return std::tie(scope, gpus, kind, copy_engine) < std::tie(o.scope, o.gpus, o.kind, o.copy_engine);
  }
};

constexpr const char* kCopyEngineAllToAll = "ce_all_to_all";

std::string nvls_note(const Context& c) {
  for (const RunInfo& r : c.in.bench.runs) {
    if (r.benchmark != "collectives") continue;
    auto it = r.environment.find("NCCL_NVLS_ENABLE");
    if (it != r.environment.end()) return "NCCL_NVLS_ENABLE=" + it->second;
  }
  return "";
}

void fit_collectives(Context& c) {
  hw::HwProfile& p = c.out.profile;
  std::vector<CollectiveCase> cases = c.in.bench.collectives;
  for (const NcclTestsLog& log : c.in.nccl_tests) {
    for (const CollectiveCase& k : log.cases()) cases.push_back(k);
  }
  std::map<GroupKey, std::vector<const CollectiveCase*>> groups;
  std::map<std::string, int> other_ops;
  for (const CollectiveCase& k : cases) {
    const bool copy_engine = k.op == kCopyEngineAllToAll;
    auto kind = copy_engine ? std::optional(CollectiveKind::ALL_TO_ALL) : profile_kind(k.op);
    if (!kind) {
      ++other_ops[k.op];
      continue;
    }
    const CollectiveScope scope = k.hosts > 1 ? CollectiveScope::INTER : CollectiveScope::INTRA;
    if (scope == CollectiveScope::INTRA && k.ranks > p.node.gpus_per_node) {
      throw ConfigError(k.file, "",
                        k.op + " on " + std::to_string(k.ranks) +
                            " GPUs of one host, but the profile's node has " +
                            std::to_string(p.node.gpus_per_node) + " GPUs");
    }
    if (k.ranks < 2) continue;
    groups[{*kind, scope, k.ranks, copy_engine}].push_back(&k);
  }
  for (const auto& [op, count] : other_ops) {
    c.out.notes.push_back(op + ": " + std::to_string(count) +
                          " sizes measured; the profile has no table for it");
  }
  const std::string nvls = nvls_note(c);
  for (const auto& [key, members] : groups) {
    std::vector<SizeTime> points;
    std::set<std::string> files;
    for (const CollectiveCase* k : members) {
      points.push_back({k->bytes, k->time_s});
      files.insert(k->file);
    }
    const bool ce = key.copy_engine;
    const bool has_base = p.has_collective(key.kind, key.scope, ce) &&
                          p.collective_table(key.kind, key.gpus, key.scope, ce).gpus == key.gpus;
    const double fallback =
        p.has_collective(key.kind, key.scope, ce) ? p.step_latency_s(key.kind, key.gpus, key.scope, ce) : 0.0;
    const CollectiveFit fit = fit_collective(key.kind, key.gpus, points, fallback);
    const std::string name = std::string(ce ? "copy-engine " : "") + hw::to_string(key.kind) + " " +
                             hw::to_string(key.scope) + " " + std::to_string(key.gpus);
    if (fit.bytes.empty()) {
      c.out.notes.push_back(name + ": no size with a transfer share >= 10% of its time; " +
                            (has_base ? "the base table stays" : "no table written"));
      continue;
    }
    hw::CollectiveTable table;
    table.kind = key.kind;
    table.scope = key.scope;
    table.gpus = key.gpus;
    table.algorithm = ce                                       ? hw::CollectiveAlgorithm::COPY_ENGINE
                      : key.kind == CollectiveKind::ALL_TO_ALL ? hw::CollectiveAlgorithm::DIRECT
                                                               : hw::CollectiveAlgorithm::RING;
    table.step_latency_s = round_significant(fit.step_latency_s, kDigits);
    table.bytes = fit.bytes;
    // The engine never moves a collective's bus bytes faster than the GPU's fabric port (usable link rate x
    // links); a larger latency-free busbw (mid sizes, where NCCL hides start-up under the transfer) is capped
    // there.
    const double port = key.scope == CollectiveScope::INTRA ? p.fabric_injection_bw_Bps(key.gpus - 1) : 0.0;
    int capped = 0;
    for (double b : fit.busbw_Bps) {
      if (port > 0 && b > port) {
        b = port;
        ++capped;
      }
      table.busbw_Bps.push_back(round_significant(b, kDigits));
    }
    const int steps = hw::collective_steps(key.kind, key.gpus);
    std::string source = "Fitted from " + std::to_string(points.size()) + " measured sizes " +
                         c.tags.tags_of(files) + " (p50" + (nvls.empty() ? "" : ", " + nvls) + "): ";
    if (fit.latency_points > 0) {
      source += "latency = median time of the " + std::to_string(fit.latency_points) + " sizes <= 64 KiB (" +
                num(fit.step_latency_s * steps * 1e6, 4) + " us) over " + std::to_string(steps) + " step" +
                (steps > 1 ? "s" : "");
    } else {
      source +=
          "no size <= 64 KiB measured: step latency " + num(fallback * 1e6, 4) + " us kept from the base";
    }
    source += "; busbw = bus_bytes / (time - latency) at the " + std::to_string(fit.bytes.size()) +
              " sizes > 64 KiB whose transfer is >= 10% of the time" +
              (fit.dropped_points > 0 ? " (" + std::to_string(fit.dropped_points) + " latency-bound size" +
                                            (fit.dropped_points > 1 ? "s" : "") + " left out)"
                                      : "") +
              ". busbw at mid sizes can exceed the large-message rate: NCCL overlaps its start-up with the "
              "transfer, which this additive model folds into busbw" +
              (capped > 0 ? "; " + std::to_string(capped) + " size" + (capped > 1 ? "s" : "") +
                                " capped at the fabric port rate " + num(port / 1e9, 4) +
                                " GB/s (usable link rate x links), the most the engine moves"
                          : std::string()) +
              ".";
    table.source = source;
    bool replaced = false;
    for (auto& existing : p.collectives) {
      if (existing.kind == key.kind && existing.scope == key.scope && existing.gpus == key.gpus &&
          (existing.algorithm == hw::CollectiveAlgorithm::COPY_ENGINE) == ce) {
        existing = table;
        replaced = true;
      }
    }
    if (!replaced) p.collectives.push_back(table);
    ErrorSummary e;
    for (const SizeTime& s : points)
      e.add(p.collective_time_s(key.kind, key.gpus, key.scope, s.bytes, ce), s.time_s);
    add_residual(
        c, name, e,
        "time vs steps x latency + bus_bytes / busbw over all " + std::to_string(points.size()) + " sizes");
  }
  if (!groups.empty()) c.calibrated_parts.push_back("collective tables");
}

// --- launch -------------------------------------------------------------------------------------

// The engine adds kernel_min to every kernel on top of table times that were mostly measured as graph
// replays; launch_bench's layer-kernel sequences measure that excess directly (eager minus graph device time
// per kernel), so the source says how well the assumption holds.
std::string eager_excess_text(const std::map<std::string, std::vector<double>>& by_measure) {
  std::string text;
  for (const auto& [measure, eager] : by_measure) {
    if (measure.rfind("eager_device_", 0) != 0) continue;
    const std::string sequence = measure.substr(13);
    auto graph = by_measure.find("graph_device_" + sequence);
    if (graph == by_measure.end()) continue;
    text +=
        (text.empty() ? "" : ", ") + sequence + " " + num((median(eager) - median(graph->second)) * 1e6, 3);
  }
  if (text.empty()) return "";
  return " Eager minus graph device time per kernel of layer kernels (launch_bench, us): " + text +
         "; the engine adds kernel_min_us to each kernel for it.";
}

void fit_launch(Context& c) {
  hw::GpuSpec& g = c.out.profile.gpu;
  std::map<std::string, std::vector<double>> by_measure;
  int largest_graph = 0;
  for (const LaunchCase& l : c.in.bench.launch) {
    by_measure[l.measure].push_back(l.time_s);
    const std::string suffix = l.measure.rfind("graph_device_", 0) == 0 ? l.measure.substr(13) : "";
    if (!suffix.empty() && suffix.size() < 9 && std::all_of(suffix.begin(), suffix.end(), ::isdigit))
      largest_graph = std::max(largest_graph, std::stoi(suffix));
  }
  if (by_measure.empty()) return;
  ErrorSummary e;
  std::string text;
  auto take = [&](const std::string& measure, double& field, const std::string& what) {
    auto it = by_measure.find(measure);
    if (it == by_measure.end()) return;
    field = round_significant(median(it->second), 3);
    for (double v : it->second) e.add(field, v);
    text += (text.empty() ? "" : "; ") + what + " " + num(field * 1e6, 3) + " us (" + measure + ")";
  };
  take("launch_host", g.launch_overhead_s, "launch_overhead_us = host time per eager launch");
  take("copy_launch_host", g.copy_launch_overhead_s,
       "copy_launch_overhead_us = host time per copy of a copy-engine collective");
  take("graph_host_1", g.graph_launch_overhead_s, "graph_launch_overhead_us = host time of one graph launch");
  if (largest_graph > 0)
    take("graph_device_" + std::to_string(largest_graph), g.graph_node_overhead_s,
         "graph_node_overhead_us = device time per empty-kernel node");
  take("launch_device", g.kernel_min_s,
       "kernel_min_us = device time of an empty kernel launched back to back");
  if (text.empty()) return;
  g.source += " Launch costs calibrated " + files_tags(c, "launch") +
              " with launch_bench (median of the runs' p50): " + text + "." + eager_excess_text(by_measure);
  add_residual(c, "launch", e, "each run's p50 vs the median kept");
  c.calibrated_parts.push_back("launch costs");
}

// A model that runs one GEMM per expert is bound by the host cost of each library call, which is about
// twice an empty kernel's launch (cuBLASLt's argument checks and algorithm setup). In a layer each call reads
// other operands than the one before; launch_bench's eager_host_gemm issues calls that way (an expert GEMM
// with its own weights per call, the GPU held so that the queue never blocks) and matches what the layer
// runner's expert loop costs the host. gemm_bench repeats one GEMM on the same operands, which costs the host
// 20-30% less (H200: 7.28 against 8.96-9.79 us); it is the fallback.
void fit_blas_call(Context& c) {
  std::vector<double> repeated;
  for (const GemmCase& g : c.in.bench.gemm) {
    if (g.host_s > 0) repeated.push_back(g.host_s);
  }
  std::vector<double> in_layer;
  for (const LaunchCase& l : c.in.bench.launch) {
    if (l.measure == "eager_host_gemm") in_layer.push_back(l.time_s);
  }
  if (repeated.empty() && in_layer.empty()) return;
  hw::GpuSpec& gpu = c.out.profile.gpu;
  const std::vector<double>& host = in_layer.empty() ? repeated : in_layer;
  gpu.blas_call_overhead_s = round_significant(median(host), 3);
  ErrorSummary e;
  for (double v : host) e.add(gpu.blas_call_overhead_s, v);
  const std::string gemm_bench = "the median host time of one cuBLASLt call over the " +
                                 std::to_string(repeated.size()) + " gemm_bench shapes " +
                                 files_tags(c, "gemm") +
                                 " (20 back-to-back enqueues of one GEMM on the same operands, median of 5)";
  if (in_layer.empty()) {
    gpu.source +=
        " blas_call_overhead_us = " + num(gpu.blas_call_overhead_s * 1e6, 3) + " us, " + gemm_bench + ".";
    add_residual(c, "blas call (host)", e, "each shape's host time per call vs the median kept");
  } else {
    gpu.source +=
        " blas_call_overhead_us = " + num(gpu.blas_call_overhead_s * 1e6, 3) + " us, the median over " +
        std::to_string(in_layer.size()) +
        " launch_bench runs of eager_host_gemm (host time per cuBLASLt call when each call has its own"
        " weights, as a layer's GEMMs do)";
    if (!repeated.empty())
      gpu.source += "; " + gemm_bench + ": " + num(round_significant(median(repeated), 3) * 1e6, 3) + " us";
    gpu.source += ".";
    add_residual(c, "blas call (host)", e, "each launch_bench run's eager_host_gemm vs the median kept");
  }
  c.calibrated_parts.push_back("BLAS call cost");
}

// --- PyTorch trace ------------------------------------------------------------------------------

void use_traces(Context& c) {
  hw::HwProfile& p = c.out.profile;
  for (const KinetoTrace& trace : c.in.traces) {
    std::map<KernelCategory, std::pair<int, double>> totals;
    for (const TraceKernel& k : trace.kernels) {
      totals[k.category].first += 1;
      totals[k.category].second += k.duration_s;
    }
    std::string summary = trace.file + ":";
    for (const auto& [category, total] : totals) {
      summary += " " + to_string(category) + " " + std::to_string(total.first) + " kernels " +
                 fixed(total.second * 1e3, 3) + " ms;";
    }
    c.out.notes.push_back(summary);
  }
  std::vector<const TraceKernel*> gemms;
  std::vector<std::string> dtypes;
  for (const KinetoTrace& trace : c.in.traces) {
    for (const TraceKernel& k : trace.kernels) {
      if (k.category != KernelCategory::GEMM || !k.gemm || k.duration_s <= 0) continue;
      const std::string dtype = k.gemm->dtype.empty() ? "bf16" : k.gemm->dtype;
      if (!p.gpu.peak_flops.count(dtype)) continue;
      gemms.push_back(&k);
      dtypes.push_back(dtype);
    }
  }
  if (gemms.empty()) return;
  auto predicted = [&](std::size_t i) {
    const TraceGemmShape& s = *gemms[i]->gemm;
    return gemm_flops(s.m, s.n, s.k) / p.achieved_gemm_flops(dtypes[i], s.m, s.n, s.k);
  };
  std::string tags;
  for (const KinetoTrace& t : c.in.traces) tags += c.tags.tag(t.file, "PyTorch profiler (Kineto) trace");
  if (c.in.bench.gemm.empty()) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < gemms.size(); ++i) ratios.push_back(predicted(i) / gemms[i]->duration_s);
    const double scale = geometric_mean(ratios);
    for (auto& row : p.efficiency.gemm.value) {
      for (double& v : row) v = round4(std::min(1.0, v * scale));
    }
    p.efficiency.gemm.source +=
        " Scaled by " + num(scale, 4) + " " + tags + ": the geometric mean of predicted / traced time over " +
        std::to_string(gemms.size()) + " GEMM kernels with recorded shapes (capped at 1).";
    c.calibrated_parts.push_back("GEMM efficiency (scaled from a PyTorch trace)");
  }
  ErrorSummary e;
  for (std::size_t i = 0; i < gemms.size(); ++i) e.add(predicted(i), gemms[i]->duration_s);
  add_residual(c, "trace gemm", e,
               c.in.bench.gemm.empty() ? "traced kernel time vs the scaled table"
                                       : "check only: traced kernel time vs the calibrated table");
}

}  // namespace

CalibrationResult calibrate(const hw::HwProfile& base, const CalibrationInputs& inputs) {
  const BenchResults& b = inputs.bench;
  if (b.gemm.empty() && b.grouped_gemm.empty() && b.tile_gemm.empty() && b.attention.empty() &&
      b.memory.empty() && b.collectives.empty() && b.contention.empty() && b.launch.empty() &&
      b.power.empty() && inputs.nccl_tests.empty() && inputs.traces.empty()) {
    throw ConfigError("calibrate", "",
                      "nothing to calibrate: the inputs hold no benchmark results, logs or traces");
  }
  CalibrationResult out;
  out.profile = base;
  out.profile.source_file.clear();
  // A copy whose GEMM and attention times scale_to_max_clock() may turn into maximum-clock times.
  CalibrationInputs clocked = inputs;
  Context c{base, clocked, out, {}, {}, {}};
  if (base.provenance.kind == hw::ProvenanceKind::CALIBRATED) {
    out.notes.push_back("the base profile '" + base.name + "' is itself calibrated" +
                        (base.source_file.empty() ? "" : " (" + base.source_file + ")") +
                        ": pass the published file (hwprofiles/profiles/" + base.name +
                        ".json) to start afresh");
  }
  check_same_gpu(c);
  set_provenance(c);
  fit_power_section(c);
  scale_to_max_clock(c, clocked.bench);
  fit_gemm(c);
  fit_grouped_gemm(c);
  fit_tile_gemm(c);
  fit_attention(c);
  fit_memory(c);
  fit_collectives(c);
  fit_contention(c);
  fit_router_topk(c);
  fit_memory_kernels(c);
  fit_launch(c);
  fit_blas_call(c);
  use_traces(c);
  for (const std::string& ignored : b.ignored) out.notes.push_back(ignored + ": not used (no profile field)");

  hw::Provenance& prov = out.profile.provenance;
  std::vector<std::string> sources = c.tags.lines();
  sources.push_back(
      "[C0] moesim calibrate: fit rules in calibrate/include/moesim/calibrate/Calibrator.hpp; "
      "parts not measured keep the base profile '" +
      base.name + "' and its sources below");
  for (const std::string& s : base.provenance.sources) sources.push_back(s);
  prov.sources = sources;
  std::string parts;
  for (const std::string& s : c.calibrated_parts) parts += (parts.empty() ? "" : ", ") + s;
  out.profile.description = base.description + " Calibrated on " + prov.device + " (" + prov.date +
                            "): " + parts + "; everything else as in the base profile.";
  out.profile.source_file = "<calibrated " + base.name + ">";
  hw::validate(out.profile);
  out.profile.source_file.clear();
  return out;
}

std::string format_residuals(const CalibrationResult& result) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "# %-26s %6s %9s %9s  %s\n", "table", "points", "max_err", "mean_err",
                "compared");
  o << line;
  std::snprintf(line, sizeof line, "# %-26s %6s %9s %9s  %s\n", "", "", "(%)", "(%)", "");
  o << line;
  double worst = 0;
  for (const Residual& r : result.residuals) {
    std::snprintf(line, sizeof line, "# %-26s %6d %9.2f %9.2f  %s\n", r.table.c_str(), r.points,
                  r.max_rel * 100, r.mean_rel * 100, r.note.c_str());
    o << line;
    worst = std::max(worst, r.max_rel);
  }
  std::snprintf(line, sizeof line, "# %zu tables fitted, largest residual %.2f%%\n", result.residuals.size(),
                worst * 100);
  o << line;
  for (const std::string& note : result.notes) o << "# note: " << note << "\n";
  return o.str();
}

}  // namespace moesim::calibrate
