// The GPU's rate of bf16 atomic adds, from PyTorch's index_add_ (kernels/tools/torch_index_add_rates.py).
#include <algorithm>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/common/Statistics.hpp"

namespace moesim::calibrate::detail {

// A bf16 index_add_ adds each source element atomically, and its time is that count over one rate at every
// size measured (2,048-16,384 rows of 2,048-4,096), the same on H100 and H200 although their HBM differs:
// the atomics, not the bytes, set it. fp32 atomics are native and far cheaper (1.5-1.8x a dense add on an
// H100), so fp32 cases are not fitted.
void fit_atomic_add(Context& c) {
  std::vector<double> rates;
  std::vector<const AtomicAddCase*> kept;
  for (const AtomicAddCase& a : c.in.bench.atomic_adds) {
    if (a.dtype != "bfloat16") continue;
    rates.push_back(static_cast<double>(a.rows) * static_cast<double>(a.hidden) / a.time_s);
    kept.push_back(&a);
  }
  if (rates.empty()) return;
  hw::GpuSpec& g = c.out.profile.gpu;
  g.atomic_add_bf16_per_s = round_significant(median(rates), 4);
  ErrorSummary e;
  for (const AtomicAddCase* a : kept)
    e.add(static_cast<double>(a->rows) * static_cast<double>(a->hidden) / g.atomic_add_bf16_per_s, a->time_s);
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  g.source += " atomic_add_bf16_G_per_s = " + num(g.atomic_add_bf16_per_s * 1e-9, 4) + ", the median over " +
              std::to_string(rates.size()) + " bf16 cases of torch_index_add_rates " +
              files_tags(c, "torch_index_add") +
              " of rows x hidden / the time of out.index_add_(0, index[rows], src[rows, hidden]) (per case " +
              num(*low * 1e-9, 4) + "-" + num(*high * 1e-9, 4) + "; fp32 cases not fitted: native atomics).";
  add_residual(c, "atomic add", e, "rows x hidden / rate vs each bf16 case's index_add_ time");
  c.calibrated_parts.push_back("atomic-add rate");
}

}  // namespace moesim::calibrate::detail
