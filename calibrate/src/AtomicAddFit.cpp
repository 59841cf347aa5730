// The GPU's rate of bf16 atomic adds, from PyTorch's index_add_ (kernels/tools/torch_index_add_rates.py).
#include <algorithm>
#include <string>
#include <vector>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/common/Statistics.hpp"

namespace moesim::calibrate::detail {

// A bf16 index_add_ adds each source element atomically, and its time is that count over one rate at every
// size measured (2,048-16,384 rows of 2,048-4,096), the same on H100 and H200 although their HBM differs:
// the atomics, not the bytes, set it. fp32 atomics are native and far cheaper (1.5-1.8x a dense add on an
// H100, against 3-4.6x for bf16), so fp32 cases are not fitted; the source gives both ratios as measured.
namespace {

// "LO-HIx a dense add" over the cases that timed one, or "" where none did.
std::string dense_ratio_text(const std::vector<const AtomicAddCase*>& cases) {
  std::vector<double> ratios;
  for (const AtomicAddCase* a : cases)
    if (a->dense_time_s > 0) ratios.push_back(a->time_s / a->dense_time_s);
  return ratios.empty() ? "" : range_text(ratios) + "x a dense add";
}

}  // namespace

void fit_atomic_add(Context& c) {
  std::vector<double> rates;
  std::vector<const AtomicAddCase*> kept, fp32;
  for (const AtomicAddCase& a : c.in.bench.atomic_adds) {
    if (a.dtype != "bfloat16") {
      fp32.push_back(&a);
      continue;
    }
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
  const std::string bf16_ratio = dense_ratio_text(kept), fp32_ratio = dense_ratio_text(fp32);
  std::string fp32_text = "fp32 cases not fitted: native atomics";
  if (!fp32.empty()) {
    fp32_text = "the " + std::to_string(fp32.size()) +
                (fp32.size() == 1 ? " fp32 case is" : " fp32 cases are") +
                " not fitted: fp32 atomics are native" + (fp32_ratio.empty() ? "" : ", " + fp32_ratio);
  }
  g.source += " atomic_add_bf16_G_per_s = " + num(g.atomic_add_bf16_per_s * 1e-9, 4) + ", the median over " +
              std::to_string(rates.size()) + " bf16 cases of torch_index_add_rates " +
              files_tags(c, "torch_index_add") +
              " of rows x hidden / the time of out.index_add_(0, index[rows], src[rows, hidden]) (per case " +
              num(*low * 1e-9, 4) + "-" + num(*high * 1e-9, 4) +
              (bf16_ratio.empty() ? "" : ", " + bf16_ratio) + "; " + fp32_text + ").";
  add_residual(c, "atomic add", e, "rows x hidden / rate vs each bf16 case's index_add_ time");
  c.calibrated_parts.push_back("atomic-add rate");
}

}  // namespace moesim::calibrate::detail
