// The power section and the scaling of measured rates to the maximum clock it implies.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/PowerFit.hpp"

namespace moesim::calibrate::detail {

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

namespace {

/** The GEMM and attention cases by where NVML saw their clock, and the factors those below were scaled by. */
struct ClockScaling {
  int below = 0, at_max = 0, without = 0;
  std::map<std::string, std::vector<double>> factors;  // benchmark -> factor of each scaled case
};

/** Scales each case NVML saw below `max_clock` to it, when the profile has a power section to do it with. */
ClockScaling scale_cases(const hw::HwProfile& p, double max_clock, BenchResults& bench) {
  ClockScaling s;
  auto scale = [&](const char* benchmark, double& time_s, const std::optional<NvmlReading>& nvml) {
    if (!nvml) {
      ++s.without;
      return;
    }
    if (nvml->sm_clock_hz >= max_clock) {
      ++s.at_max;
      return;
    }
    ++s.below;
    if (!p.power.present) return;
    const double factor = max_clock_rate_factor(nvml->sm_clock_hz, max_clock, p.power.clock_rate_exponent);
    time_s /= factor;
    s.factors[benchmark].push_back(factor);
  };
  for (GemmCase& g : bench.gemm) scale("gemm", g.time_s, g.nvml);
  for (GroupedGemmCase& g : bench.grouped_gemm) scale("grouped_gemm", g.time_s, g.nvml);
  for (AttentionCase& a : bench.attention) scale("attention", a.time_s, a.nvml);
  return s;
}

double mean_of(const std::vector<double>& values) {
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  return mean;
}

}  // namespace

/**
 * With a power section (fitted or the base's), the efficiency tables describe the GPU at its maximum clock
 * and the power model lowers it: a case that NVML saw below the maximum clock is scaled to it by (max /
 * clock)^clock_rate_exponent before it is fitted. Sets c.clock_text (for the table sources) and a note.
 */
void scale_to_max_clock(Context& c, BenchResults& bench) {
  const hw::HwProfile& p = c.out.profile;
  const double max_clock = p.gpu.max_boost_clock_hz;
  const std::string clock = num(max_clock / 1e6, 4) + " MHz";
  const ClockScaling s = scale_cases(p, max_clock, bench);
  if (s.below + s.at_max + s.without == 0) return;
  if (!p.power.present) {
    if (s.below > 0) {
      c.out.notes.push_back(
          "clocks: " + std::to_string(s.below) + " GEMM/attention cases ran below the maximum clock " +
          clock +
          " (NVML), but without a power section (power_bench results, or a base profile that has "
          "one) their rates are used as measured");
    }
    return;
  }
  std::vector<double> all;
  for (const auto& [benchmark, values] : s.factors) all.insert(all.end(), values.begin(), values.end());
  c.out.notes.push_back(
      "clocks: " + std::to_string(all.size()) +
      " GEMM/grouped GEMM/attention cases ran below the maximum clock " + clock +
      " (NVML) and were scaled to it by (max / clock)^" + num(p.power.clock_rate_exponent, 4) +
      (all.empty() ? "" : ", mean factor " + num(mean_of(all), 4)) + "; " + std::to_string(s.at_max) +
      " ran at it; " + std::to_string(s.without) +
      " carry no NVML clock (files from before 0bb5f2e, torch SDPA) and are used as measured");
  for (const auto& [benchmark, values] : s.factors) {
    c.clock_text[benchmark] = " Rates scaled to the maximum clock " + clock + " by (" + clock +
                              " / the case's mean NVML SM clock)^clock_rate_exponent " +
                              num(p.power.clock_rate_exponent, 4) +
                              " (power section) before the fit: " + std::to_string(values.size()) + " " +
                              benchmark + " cases ran below it, mean factor " + num(mean_of(values), 4) +
                              "; cases without an NVML clock are used as measured. This describes the GPU at "
                              "its maximum clock; the power model lowers the clock.";
  }
}

}  // namespace moesim::calibrate::detail
