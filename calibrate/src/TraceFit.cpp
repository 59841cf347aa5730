// PyTorch profiler traces: a kernel summary per trace, and the GEMM table scaled to traced GEMMs.
#include <map>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"

namespace moesim::calibrate::detail {

void use_traces(Context& c) {
  hw::HwProfile& p = c.out.profile;
  for (const KinetoTrace& trace : c.in.traces) {
    std::map<traces::GpuKind, std::pair<int, double>> totals;
    for (const TraceKernel& k : trace.kernels) {
      totals[k.kind].first += 1;
      totals[k.kind].second += k.duration_s;
    }
    std::string summary = trace.file + ":";
    for (const auto& [kind, total] : totals) {
      summary += " " + traces::to_string(kind) + " " + std::to_string(total.first) + " kernels " +
                 fixed(total.second * 1e3, 3) + " ms;";
    }
    c.out.notes.push_back(summary);
  }
  std::vector<const TraceKernel*> gemms;
  std::vector<std::string> dtypes;
  for (const KinetoTrace& trace : c.in.traces) {
    for (const TraceKernel& k : trace.kernels) {
      if (k.kind != traces::GpuKind::GEMM || !k.gemm || k.duration_s <= 0) continue;
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

}  // namespace moesim::calibrate::detail
