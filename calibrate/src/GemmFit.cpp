// The GEMM efficiency table, per-shape curves, dtype factors and the grouped-GEMM factor.
#include <algorithm>
#include <map>
#include <set>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"

namespace moesim::calibrate::detail {
namespace {

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

// The table's residual over the bf16 GEMMs, and each other dtype's factor: its measured efficiency over the
// bf16 table's at the same shape.
void fit_dtype_factors(Context& c, double sustained) {
  hw::HwProfile& p = c.out.profile;
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

}  // namespace

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
  fit_dtype_factors(c, sustained);
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

}  // namespace moesim::calibrate::detail
