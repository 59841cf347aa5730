#include "moesim/calibrate/PowerFit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "SourceText.hpp"
#include "moesim/calibrate/Fitting.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

constexpr int kDigits = 4;  // as the rest of the calibrated profile

bool has_reason(const PowerLoad& load, const std::string& reason) {
  return load.clock_reasons.find(reason) != std::string::npos;
}

struct Located {
  const PowerLoad* load;
  double max_clock_hz;
  double idle_w;  ///< the idle power of the load's GPU in its run (the mean over all idle loads if none)
};

}  // namespace

double busy_dynamic_power_w(const PowerLoad& load, double idle_w) {
  return load.duty > 0 ? (load.power_w - idle_w) / load.duty : 0.0;
}

bool uncapped_gemm(const PowerLoad& load, double max_clock_hz) {
  return load.kind == "gemm" &&
         (!has_reason(load, "sw_power_cap") || load.sm_clock_hz >= kUncappedClockShare * max_clock_hz);
}

bool capped_gemm(const PowerLoad& load, double max_clock_hz) {
  return load.kind == "gemm" && has_reason(load, "sw_power_cap") &&
         load.sm_clock_hz < kCappedClockShare * max_clock_hz;
}

double max_clock_rate_factor(double clock_hz, double max_clock_hz, double clock_rate_exponent) {
  if (!(clock_hz > 0) || clock_hz >= max_clock_hz) return 1.0;
  return std::pow(max_clock_hz / clock_hz, clock_rate_exponent);
}

double modelled_power_w(const hw::PowerSpec& spec, const PowerLoad& load, double dense_peak_flops) {
  double dynamic = 0;
  if (load.kind == "gemm") {
    const double v = load.first_rate > 0 ? std::min(1.0, load.busy_rate / load.first_rate) : 1.0;
    dynamic = spec.compute_w_at_peak * load.first_rate / dense_peak_flops * std::pow(v, spec.speed_exponent);
  } else if (load.kind == "copy") {
    dynamic = spec.hbm_j_per_byte * 2 * load.busy_rate;
  } else if (load.kind == "peer") {
    dynamic = (spec.hbm_j_per_byte + spec.link_j_per_byte) * 2 * load.busy_rate;
  }
  return spec.idle_w + load.duty * dynamic;
}

PowerFit fit_power(const std::vector<PowerRun>& runs, const std::map<std::string, double>& peak_flops,
                   const hw::PowerSpec& fallback, const std::string& tags) {
  std::string files;
  for (const PowerRun& r : runs) files += (files.empty() ? "" : ", ") + r.file;
  auto fail = [&](const std::string& message) { throw ConfigError(files, "", "power_bench: " + message); };
  if (runs.empty()) fail("no power_bench results");

  PowerFit fit;
  hw::PowerSpec& w = fit.spec;
  w.present = true;
  // idle_w: the mean of the idle loads; each load's dynamic power is taken above its own GPU's idle power.
  double idle_sum = 0;
  std::map<std::pair<std::size_t, int>, double> idle_of_gpu;  // (run, GPU) -> idle power
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const PowerLoad& l : runs[i].loads) {
      if (l.kind != "idle") continue;
      idle_sum += l.power_w;
      idle_of_gpu[{i, l.gpu}] = l.power_w;
      ++fit.idle_loads;
    }
  }
  if (fit.idle_loads == 0) fail("no idle load (--loads idle,...): the idle power cannot be fitted");
  const double idle = idle_sum / fit.idle_loads;

  std::vector<Located> loads;
  double max_clock_hz = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const PowerRun& r = runs[i];
    if (!(r.max_clock_hz > 0)) throw ConfigError(r.file, "/gpus/0/sm_clock_max_mhz", "must be > 0");
    w.limit_w = std::max(w.limit_w, r.limit_w);
    max_clock_hz = std::max(max_clock_hz, r.max_clock_hz);
    for (const PowerLoad& l : r.loads) {
      auto own = idle_of_gpu.find({i, l.gpu});
      loads.push_back({&l, r.max_clock_hz, own != idle_of_gpu.end() ? own->second : idle});
    }
  }
  if (!(w.limit_w > 0)) fail("no enforced power limit recorded (power_limit_w): NVML was not available");

  auto peak_of = [&](const PowerLoad& l) {
    auto it = peak_flops.find(l.dtype);
    if (it == peak_flops.end()) fail("load " + l.load + ": the profile has no " + l.dtype + " peak");
    return it->second;
  };

  // compute_w_at_peak from the GEMM loads at the maximum clock.
  std::vector<double> x_peak, p_dyn, uncapped_rates;
  for (const Located& x : loads) {
    if (!uncapped_gemm(*x.load, x.max_clock_hz) || !(x.load->duty > 0)) continue;
    x_peak.push_back(x.load->first_rate / peak_of(*x.load));
    p_dyn.push_back(busy_dynamic_power_w(*x.load, x.idle_w));
    uncapped_rates.push_back(x.load->first_rate / 1e12);
    ++fit.uncapped_loads;
  }
  if (fit.uncapped_loads == 0) {
    fail(
        "no GEMM load ran at the maximum clock (no sw_power_cap, or >= 99% of it): "
        "compute_w_at_peak needs one, e.g. gemm:8192:8192:8192:0.25");
  }
  const double compute_w = slope_through_origin(x_peak, p_dyn);

  // speed_exponent and clock_rate_exponent from the capped GEMM loads.
  std::vector<double> ln_clock, ln_speed, ln_ratio, capped_clocks_mhz;
  for (const Located& x : loads) {
    const PowerLoad& l = *x.load;
    if (!capped_gemm(l, x.max_clock_hz) || !(l.duty > 0) || !(l.first_rate > 0)) continue;
    const double v = l.busy_rate / l.first_rate;
    const double at_v1 = compute_w * l.first_rate / peak_of(l);
    const double ratio = busy_dynamic_power_w(l, x.idle_w) / at_v1;
    if (!(v < 1) || !(ratio > 0)) continue;  // no slowdown (or no power) to read an exponent from
    fit.speed_exponents.push_back(std::log(ratio) / std::log(v));
    ln_clock.push_back(std::log(l.sm_clock_hz / x.max_clock_hz));
    ln_speed.push_back(std::log(v));
    ln_ratio.push_back(std::log(ratio));
    capped_clocks_mhz.push_back(l.sm_clock_hz / 1e6);
  }
  fit.capped_loads = static_cast<int>(fit.speed_exponents.size());
  if (fit.capped_loads == 0) {
    fail(
        "no GEMM load was held by the power limit (sw_power_cap below 97% of the maximum clock, slower than "
        "its first burst): speed_exponent needs one, e.g. gemm:8192:8192:8192 at full duty");
  }
  double gamma = 0;
  for (double g : fit.speed_exponents) gamma += g / fit.capped_loads;
  const double beta = slope_through_origin(ln_clock, ln_speed);
  if (!(gamma > 1)) {
    fail("the capped GEMM loads give speed_exponent " + num(gamma, 4) +
         " (must be > 1: power must fall faster than speed as the clock drops); per load " +
         range_text(fit.speed_exponents));
  }
  if (!(beta > 0 && beta <= 1.5)) {
    fail("the capped GEMM loads give clock_rate_exponent " + num(beta, 4) +
         " (must be in (0, 1.5]: a lower clock must slow a GEMM, at most as clock^1.5)");
  }

  // Energies per byte.
  std::vector<double> copy_bytes, copy_power, copy_rates;
  for (const Located& x : loads) {
    if (x.load->kind != "copy" || !(x.load->duty > 0) || !(x.load->busy_rate > 0)) continue;
    copy_bytes.push_back(2 * x.load->busy_rate);
    copy_power.push_back(busy_dynamic_power_w(*x.load, x.idle_w));
    copy_rates.push_back(x.load->busy_rate / 1e12);
  }
  fit.copy_loads = static_cast<int>(copy_bytes.size());
  const double fallback_hbm = fallback.present ? fallback.hbm_j_per_byte : 0.0;
  const double fallback_link = fallback.present ? fallback.link_j_per_byte : 0.0;
  const double hbm = fit.copy_loads > 0 ? slope_through_origin(copy_bytes, copy_power) : fallback_hbm;
  std::vector<double> peer_bytes, peer_power, peer_rates;
  for (const Located& x : loads) {
    if (x.load->kind != "peer" || !(x.load->duty > 0) || !(x.load->busy_rate > 0)) continue;
    peer_bytes.push_back(2 * x.load->busy_rate);
    peer_power.push_back(busy_dynamic_power_w(*x.load, x.idle_w) - hbm * 2 * x.load->busy_rate);
    peer_rates.push_back(x.load->busy_rate / 1e9);
  }
  fit.peer_loads = static_cast<int>(peer_bytes.size());
  const double link_fit = slope_through_origin(peer_bytes, peer_power);
  const double link = fit.peer_loads > 0 ? std::max(0.0, link_fit) : fallback_link;
  if (fit.peer_loads > 0 && link_fit < 0) {
    fit.notes.push_back("power: the peer-copy loads draw less than their HBM traffic explains (link energy " +
                        num(link_fit * 1e12, 3) + " pJ/byte): link_pj_per_byte set to 0");
  }

  w.limit_w = round_significant(w.limit_w, kDigits);
  w.idle_w = round_significant(idle, kDigits);
  w.compute_w_at_peak = round_significant(compute_w, kDigits);
  w.speed_exponent = round_significant(gamma, kDigits);
  w.clock_rate_exponent = round_significant(beta, kDigits);
  w.hbm_j_per_byte = round_significant(hbm, kDigits);
  w.link_j_per_byte = round_significant(link, kDigits);

  // The text, in the order of the file comment.
  std::string gemm_dtype = "bf16";
  for (const Located& x : loads) {
    if (x.load->kind == "gemm") gemm_dtype = x.load->dtype;
  }
  const double shown_peak = peak_flops.count(gemm_dtype) ? peak_flops.at(gemm_dtype) : 0.0;
  std::string s =
      "power_bench " + tags + " (NVML board power and SM clock, maximum clock " + num(max_clock_hz / 1e6, 4) +
      " MHz): idle_w " + num(w.idle_w, 4) + " = mean of " + std::to_string(fit.idle_loads) + " idle load" +
      (fit.idle_loads > 1 ? "s" : "") + "; limit_w " + num(w.limit_w, 4) +
      " = the enforced power limit; compute_w_at_peak " + num(w.compute_w_at_peak, 4) +
      " W = least squares through the origin of P_dyn = (power - idle) / duty against first-burst "
      "rate / dense peak over " +
      std::to_string(fit.uncapped_loads) + " GEMM load" + (fit.uncapped_loads > 1 ? "s" : "") +
      " at the maximum clock (P_dyn " + range_text(p_dyn) + " W at " + range_text(uncapped_rates) +
      " TF/s of the " + num(shown_peak / 1e12, 4) + " TF/s " + gemm_dtype + " peak); speed_exponent " +
      num(w.speed_exponent, 4) + " = mean over " + std::to_string(fit.capped_loads) +
      " power-capped GEMM loads (" + range_text(capped_clocks_mhz, 4) +
      " MHz) of ln(P_dyn / (compute_w_at_peak x first / peak)) / ln v, v = busy / first-burst rate "
      "(per load " +
      range_text(fit.speed_exponents) + "); clock_rate_exponent " + num(w.clock_rate_exponent, 4) +
      " = least squares through the origin of ln v on ln(clock / maximum clock) over the same loads; ";
  if (fit.copy_loads > 0) {
    s += "hbm_pj_per_byte " + num(w.hbm_j_per_byte * 1e12, 4) +
         " = least squares of P_dyn against 2 x rate over " + std::to_string(fit.copy_loads) +
         " device-to-device copy load" + (fit.copy_loads > 1 ? "s" : "") + " (read + write, " +
         range_text(copy_rates) + " TB/s); ";
  } else {
    s += "hbm_pj_per_byte " + num(w.hbm_j_per_byte * 1e12, 4) + ": no copy load measured, " +
         (fallback.present ? "kept from the base profile; " : "0; ");
    fit.notes.push_back("power: no copy load among the power_bench results: hbm_pj_per_byte " +
                        std::string(fallback.present ? "kept from the base profile" : "set to 0"));
  }
  if (fit.peer_loads > 0) {
    s += "link_pj_per_byte " + num(w.link_j_per_byte * 1e12, 4) +
         " = least squares of P_dyn - hbm x 2 x rate against " + "2 x rate (sent + received) over " +
         std::to_string(fit.peer_loads) + " peer-copy load" + (fit.peer_loads > 1 ? "s" : "") + " (" +
         range_text(peer_rates) + " GB/s per GPU).";
  } else {
    s += "link_pj_per_byte " + num(w.link_j_per_byte * 1e12, 4) +
         ": no peer-copy load measured (it needs >= 2 GPUs), " +
         (fallback.present ? "kept from the base profile." : "so fabric traffic draws no power here.");
    fit.notes.push_back(
        "power: no peer-copy load among the power_bench results (peer loads need >= 2 GPUs): "
        "link_pj_per_byte " +
        std::string(fallback.present ? "kept from the base profile"
                                     : "set to 0, NVLink traffic draws no power"));
  }
  w.source = s;

  fit.notes.push_back(
      "power: speed_exponent " + num(w.speed_exponent, 4) + " is the mean over " +
      std::to_string(fit.capped_loads) + " capped GEMM loads, spread " + range_text(fit.speed_exponents) +
      " (a least-squares slope through the origin of ln(P_dyn / P_dyn at v=1) on ln v gives " +
      num(slope_through_origin(ln_speed, ln_ratio), 3) + ")");
  const auto gemm_loads =
      std::count_if(loads.begin(), loads.end(), [](const Located& x) { return x.load->kind == "gemm"; });
  const auto left_out = gemm_loads - fit.uncapped_loads - fit.capped_loads;
  if (left_out > 0) {
    fit.notes.push_back(
        "power: " + std::to_string(left_out) +
        " GEMM load(s) left out: power-capped at 97-99% of the maximum clock, or not slower than "
        "their first burst");
  }
  return fit;
}

}  // namespace moesim::calibrate
