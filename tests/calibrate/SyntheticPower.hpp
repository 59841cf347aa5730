#pragma once
/**
 * @file A power_bench run made from the model of calibrate/include/moesim/calibrate/PowerFit.hpp with known
 * parameters, so that a fit must give them back.
 */
#include <cmath>
#include <string>

#include "moesim/calibrate/BenchResults.hpp"

namespace moesim::calibrate::testing {

/** @brief The parameters the synthetic run is made with. */
struct PowerTruth {
  double idle_w = 100;
  double limit_w = 700;
  double compute_w = 1000;  ///< at 100% of the dense peak
  double gamma = 2.5;       ///< speed_exponent
  double beta = 0.6;        ///< clock_rate_exponent
  double hbm_j = 1e-10;     ///< per byte
  double link_j = 0;        ///< per byte sent or received; 0 = no peer load in the run
  double peak = 1000e12;    ///< dense bf16 peak, FLOP/s
  double max_clock_hz = 2000e6;
};

inline PowerLoad power_gemm(const PowerTruth& t, double first_flops, double duty, double clock_hz) {
  PowerLoad l;
  l.kind = "gemm";
  l.dtype = "bf16";
  l.m = l.n = l.k = 8192;
  l.target_duty = duty;
  l.duty = duty;
  l.first_rate = first_flops;
  const double v = std::pow(clock_hz / t.max_clock_hz, t.beta);
  l.busy_rate = first_flops * v;
  l.sm_clock_hz = clock_hz;
  l.power_w = t.idle_w + duty * t.compute_w * first_flops / t.peak * std::pow(v, t.gamma);
  l.clock_reasons = clock_hz < t.max_clock_hz ? "sw_power_cap" : "none";
  l.load = "gemm:8192:8192:8192:" + std::to_string(duty);
  return l;
}

inline PowerLoad power_copy(const PowerTruth& t, const std::string& kind, double rate, double duty) {
  PowerLoad l;
  l.kind = kind;
  l.load = kind;
  l.target_duty = duty;
  l.duty = duty;
  l.busy_rate = l.first_rate = rate;
  l.sm_clock_hz = t.max_clock_hz;
  l.power_w = t.idle_w + duty * (t.hbm_j + (kind == "peer" ? t.link_j : 0.0)) * 2 * rate;
  l.clock_reasons = "none";
  return l;
}

/**
 * @brief idle; two GEMMs at the maximum clock (duty 0.25 and 0.5); three capped ones (75%, 85% and 90% of the
 * maximum clock); copies at duty 1 and 0.5; and, with link_j > 0, one peer load.
 */
inline PowerRun synthetic_power_run(const PowerTruth& t, const std::string& file = "power.json") {
  PowerRun run;
  run.file = file;
  run.limit_w = t.limit_w;
  run.max_clock_hz = t.max_clock_hz;
  PowerLoad idle;
  idle.kind = idle.load = "idle";
  idle.power_w = t.idle_w;
  idle.sm_clock_hz = t.max_clock_hz;
  idle.clock_reasons = "none";
  run.loads.push_back(idle);
  run.loads.push_back(power_gemm(t, 800e12, 0.25, t.max_clock_hz));
  run.loads.push_back(power_gemm(t, 600e12, 0.5, t.max_clock_hz));
  run.loads.push_back(power_gemm(t, 800e12, 1.0, 0.75 * t.max_clock_hz));
  run.loads.push_back(power_gemm(t, 700e12, 0.75, 0.85 * t.max_clock_hz));
  run.loads.push_back(power_gemm(t, 600e12, 1.0, 0.9 * t.max_clock_hz));
  run.loads.push_back(power_copy(t, "copy", 2.1e12, 1.0));
  run.loads.push_back(power_copy(t, "copy", 2.0e12, 0.5));
  if (t.link_j > 0) run.loads.push_back(power_copy(t, "peer", 150e9, 1.0));
  return run;
}

}  // namespace moesim::calibrate::testing
