// The memory-bound efficiency curve from memory_bench.
#include <cmath>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"

namespace moesim::calibrate::detail {
namespace {
// Memory cases are binned by bytes in factors of 4 before they join the curve.
constexpr double kMemoryBinFactor = 4.0;
}  // namespace

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
    source += "; " + inherited_points_text(merged.inherited_points, "the measured bytes", merged.scale_low,
                                           merged.scale_high);
  }
  p.efficiency.memory.source = source + ".";
  ErrorSummary e;
  for (const MemoryCase* m : kept) e.add(m->bytes / (hbm * p.memory_efficiency(m->bytes)), m->time_s);
  add_residual(
      c, "memory", e,
      "time vs bytes / (HBM x curve); " + std::to_string(dropped) + " L2-resident cases not compared");
  c.calibrated_parts.push_back("memory efficiency");
}

}  // namespace moesim::calibrate::detail
