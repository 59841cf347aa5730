#include "moesim/calibrate/PowerFit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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

namespace {

/**
 * One power fit, step by step in the order of the file comment: the idle power and the loads, the GEMM
 * power at peak, the exponents, the energies per byte, then the source text and the notes. Each step keeps
 * what the text needs to say about it.
 */
class PowerFitter {
 public:
  PowerFitter(const std::vector<PowerRun>& runs, const std::map<std::string, double>& peak_flops,
              const hw::PowerSpec& fallback)
      : runs_(runs), peak_flops_(peak_flops), fallback_(fallback) {
    for (const PowerRun& r : runs) files_ += (files_.empty() ? "" : ", ") + r.file;
    if (runs.empty()) fail("no power_bench results");
    fit_.spec.present = true;
  }

  PowerFit run(const std::string& tags) {
    collect_loads();
    fit_compute_power();
    fit_exponents();
    fit_energies();
    round_section();
    fit_.spec.source = source(tags);
    add_notes();
    return fit_;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError(files_, "", "power_bench: " + message);
  }

  double peak_of(const PowerLoad& l) const {
    auto it = peak_flops_.find(l.dtype);
    if (it == peak_flops_.end()) fail("load " + l.load + ": the profile has no " + l.dtype + " peak");
    return it->second;
  }

  // idle_w: the mean of the idle loads; each load's dynamic power is taken above its own GPU's idle power.
  void collect_loads() {
    double idle_sum = 0;
    std::map<std::pair<std::size_t, int>, double> idle_of_gpu;  // (run, GPU) -> idle power
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      for (const PowerLoad& l : runs_[i].loads) {
        if (l.kind != "idle") continue;
        idle_sum += l.power_w;
        idle_of_gpu[{i, l.gpu}] = l.power_w;
        ++fit_.idle_loads;
      }
    }
    if (fit_.idle_loads == 0) fail("no idle load (--loads idle,...): the idle power cannot be fitted");
    idle_ = idle_sum / fit_.idle_loads;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const PowerRun& r = runs_[i];
      if (!(r.max_clock_hz > 0)) throw ConfigError(r.file, "/gpus/0/sm_clock_max_mhz", "must be > 0");
      fit_.spec.limit_w = std::max(fit_.spec.limit_w, r.limit_w);
      max_clock_hz_ = std::max(max_clock_hz_, r.max_clock_hz);
      for (const PowerLoad& l : r.loads) {
        auto own = idle_of_gpu.find({i, l.gpu});
        loads_.push_back({&l, r.max_clock_hz, own != idle_of_gpu.end() ? own->second : idle_});
      }
    }
    if (!(fit_.spec.limit_w > 0))
      fail("no enforced power limit recorded (power_limit_w): NVML was not available");
  }

  // compute_w_at_peak from the GEMM loads at the maximum clock.
  void fit_compute_power() {
    std::vector<double> x_peak;
    for (const Located& x : loads_) {
      if (!uncapped_gemm(*x.load, x.max_clock_hz) || !(x.load->duty > 0)) continue;
      x_peak.push_back(x.load->first_rate / peak_of(*x.load));
      p_dyn_.push_back(busy_dynamic_power_w(*x.load, x.idle_w));
      uncapped_rates_.push_back(x.load->first_rate / 1e12);
      ++fit_.uncapped_loads;
    }
    if (fit_.uncapped_loads == 0) {
      fail(
          "no GEMM load ran at the maximum clock (no sw_power_cap, or >= 99% of it): "
          "compute_w_at_peak needs one, e.g. gemm:8192:8192:8192:0.25");
    }
    compute_w_ = slope_through_origin(x_peak, p_dyn_);
  }

  // speed_exponent and clock_rate_exponent from the capped GEMM loads.
  void fit_exponents() {
    std::vector<double> ln_clock;
    for (const Located& x : loads_) {
      const PowerLoad& l = *x.load;
      if (!capped_gemm(l, x.max_clock_hz) || !(l.duty > 0) || !(l.first_rate > 0)) continue;
      const double v = l.busy_rate / l.first_rate;
      const double at_v1 = compute_w_ * l.first_rate / peak_of(l);
      const double ratio = busy_dynamic_power_w(l, x.idle_w) / at_v1;
      if (!(v < 1) || !(ratio > 0)) continue;  // no slowdown (or no power) to read an exponent from
      fit_.speed_exponents.push_back(std::log(ratio) / std::log(v));
      ln_clock.push_back(std::log(l.sm_clock_hz / x.max_clock_hz));
      ln_speed_.push_back(std::log(v));
      ln_ratio_.push_back(std::log(ratio));
      capped_clocks_mhz_.push_back(l.sm_clock_hz / 1e6);
    }
    fit_.capped_loads = static_cast<int>(fit_.speed_exponents.size());
    if (fit_.capped_loads == 0) {
      fail(
          "no GEMM load was held by the power limit (sw_power_cap below 97% of the maximum clock, slower "
          "than "
          "its first burst): speed_exponent needs one, e.g. gemm:8192:8192:8192 at full duty");
    }
    for (double g : fit_.speed_exponents) gamma_ += g / fit_.capped_loads;
    beta_ = slope_through_origin(ln_clock, ln_speed_);
    if (!(gamma_ > 1)) {
      fail("the capped GEMM loads give speed_exponent " + num(gamma_, 4) +
           " (must be > 1: power must fall faster than speed as the clock drops); per load " +
           range_text(fit_.speed_exponents));
    }
    if (!(beta_ > 0 && beta_ <= 1.5)) {
      fail("the capped GEMM loads give clock_rate_exponent " + num(beta_, 4) +
           " (must be in (0, 1.5]: a lower clock must slow a GEMM, at most as clock^1.5)");
    }
  }

  // Energies per byte: HBM from device-to-device copies, the fabric from peer copies beyond their HBM share.
  void fit_energies() {
    std::vector<double> copy_bytes, copy_power;
    for (const Located& x : loads_) {
      if (x.load->kind != "copy" || !(x.load->duty > 0) || !(x.load->busy_rate > 0)) continue;
      copy_bytes.push_back(2 * x.load->busy_rate);
      copy_power.push_back(busy_dynamic_power_w(*x.load, x.idle_w));
      copy_rates_.push_back(x.load->busy_rate / 1e12);
    }
    fit_.copy_loads = static_cast<int>(copy_bytes.size());
    const double fallback_hbm = fallback_.present ? fallback_.hbm_j_per_byte : 0.0;
    const double fallback_link = fallback_.present ? fallback_.link_j_per_byte : 0.0;
    hbm_ = fit_.copy_loads > 0 ? slope_through_origin(copy_bytes, copy_power) : fallback_hbm;
    std::vector<double> peer_bytes, peer_power;
    for (const Located& x : loads_) {
      if (x.load->kind != "peer" || !(x.load->duty > 0) || !(x.load->busy_rate > 0)) continue;
      peer_bytes.push_back(2 * x.load->busy_rate);
      peer_power.push_back(busy_dynamic_power_w(*x.load, x.idle_w) - hbm_ * 2 * x.load->busy_rate);
      peer_rates_.push_back(x.load->busy_rate / 1e9);
    }
    fit_.peer_loads = static_cast<int>(peer_bytes.size());
    const double link_fit = slope_through_origin(peer_bytes, peer_power);
    link_ = fit_.peer_loads > 0 ? std::max(0.0, link_fit) : fallback_link;
    if (fit_.peer_loads > 0 && link_fit < 0) {
      fit_.notes.push_back(
          "power: the peer-copy loads draw less than their HBM traffic explains (link energy " +
          num(link_fit * 1e12, 3) + " pJ/byte): link_pj_per_byte set to 0");
    }
  }

  void round_section() {
    hw::PowerSpec& w = fit_.spec;
    w.limit_w = round_significant(w.limit_w, kDigits);
    w.idle_w = round_significant(idle_, kDigits);
    w.compute_w_at_peak = round_significant(compute_w_, kDigits);
    w.speed_exponent = round_significant(gamma_, kDigits);
    w.clock_rate_exponent = round_significant(beta_, kDigits);
    w.hbm_j_per_byte = round_significant(hbm_, kDigits);
    w.link_j_per_byte = round_significant(link_, kDigits);
  }

  // The source text, in the order of the file comment; a missing copy or peer load also becomes a note.
  std::string source(const std::string& tags) {
    const hw::PowerSpec& w = fit_.spec;
    std::string gemm_dtype = "bf16";
    for (const Located& x : loads_) {
      if (x.load->kind == "gemm") gemm_dtype = x.load->dtype;
    }
    const double shown_peak = peak_flops_.count(gemm_dtype) ? peak_flops_.at(gemm_dtype) : 0.0;
    std::string s =
        "power_bench " + tags + " (NVML board power and SM clock, maximum clock " +
        num(max_clock_hz_ / 1e6, 4) + " MHz): idle_w " + num(w.idle_w, 4) + " = mean of " +
        std::to_string(fit_.idle_loads) + " idle load" + (fit_.idle_loads > 1 ? "s" : "") + "; limit_w " +
        num(w.limit_w, 4) + " = the enforced power limit; compute_w_at_peak " + num(w.compute_w_at_peak, 4) +
        " W = least squares through the origin of P_dyn = (power - idle) / duty against first-burst "
        "rate / dense peak over " +
        std::to_string(fit_.uncapped_loads) + " GEMM load" + (fit_.uncapped_loads > 1 ? "s" : "") +
        " at the maximum clock (P_dyn " + range_text(p_dyn_) + " W at " + range_text(uncapped_rates_) +
        " TF/s of the " + num(shown_peak / 1e12, 4) + " TF/s " + gemm_dtype + " peak); speed_exponent " +
        num(w.speed_exponent, 4) + " = mean over " + std::to_string(fit_.capped_loads) +
        " power-capped GEMM loads (" + range_text(capped_clocks_mhz_, 4) +
        " MHz) of ln(P_dyn / (compute_w_at_peak x first / peak)) / ln v, v = busy / first-burst rate "
        "(per load " +
        range_text(fit_.speed_exponents) + "); clock_rate_exponent " + num(w.clock_rate_exponent, 4) +
        " = least squares through the origin of ln v on ln(clock / maximum clock) over the same loads; ";
    return s + copy_text() + peer_text();
  }

  std::string copy_text() {
    const hw::PowerSpec& w = fit_.spec;
    if (fit_.copy_loads > 0) {
      return "hbm_pj_per_byte " + num(w.hbm_j_per_byte * 1e12, 4) +
             " = least squares of P_dyn against 2 x rate over " + std::to_string(fit_.copy_loads) +
             " device-to-device copy load" + (fit_.copy_loads > 1 ? "s" : "") + " (read + write, " +
             range_text(copy_rates_) + " TB/s); ";
    }
    fit_.notes.push_back("power: no copy load among the power_bench results: hbm_pj_per_byte " +
                         std::string(fallback_.present ? "kept from the base profile" : "set to 0"));
    return "hbm_pj_per_byte " + num(w.hbm_j_per_byte * 1e12, 4) + ": no copy load measured, " +
           (fallback_.present ? "kept from the base profile; " : "0; ");
  }

  std::string peer_text() {
    const hw::PowerSpec& w = fit_.spec;
    if (fit_.peer_loads > 0) {
      return "link_pj_per_byte " + num(w.link_j_per_byte * 1e12, 4) +
             " = least squares of P_dyn - hbm x 2 x rate against " + "2 x rate (sent + received) over " +
             std::to_string(fit_.peer_loads) + " peer-copy load" + (fit_.peer_loads > 1 ? "s" : "") + " (" +
             range_text(peer_rates_) + " GB/s per GPU).";
    }
    fit_.notes.push_back(
        "power: no peer-copy load among the power_bench results (peer loads need >= 2 GPUs): "
        "link_pj_per_byte " +
        std::string(fallback_.present ? "kept from the base profile"
                                      : "set to 0, NVLink traffic draws no power"));
    return "link_pj_per_byte " + num(w.link_j_per_byte * 1e12, 4) +
           ": no peer-copy load measured (it needs >= 2 GPUs), " +
           (fallback_.present ? "kept from the base profile." : "so fabric traffic draws no power here.");
  }

  void add_notes() {
    fit_.notes.push_back(
        "power: speed_exponent " + num(fit_.spec.speed_exponent, 4) + " is the mean over " +
        std::to_string(fit_.capped_loads) + " capped GEMM loads, spread " + range_text(fit_.speed_exponents) +
        " (a least-squares slope through the origin of ln(P_dyn / P_dyn at v=1) on ln v gives " +
        num(slope_through_origin(ln_speed_, ln_ratio_), 3) + ")");
    const auto gemm_loads =
        std::count_if(loads_.begin(), loads_.end(), [](const Located& x) { return x.load->kind == "gemm"; });
    const auto left_out = gemm_loads - fit_.uncapped_loads - fit_.capped_loads;
    if (left_out > 0) {
      fit_.notes.push_back(
          "power: " + std::to_string(left_out) +
          " GEMM load(s) left out: power-capped at 97-99% of the maximum clock, or not slower than "
          "their first burst");
    }
  }

  const std::vector<PowerRun>& runs_;
  const std::map<std::string, double>& peak_flops_;
  const hw::PowerSpec& fallback_;
  std::string files_;
  PowerFit fit_;
  std::vector<Located> loads_;
  double idle_ = 0, max_clock_hz_ = 0, compute_w_ = 0, gamma_ = 0, beta_ = 0, hbm_ = 0, link_ = 0;
  std::vector<double> p_dyn_, uncapped_rates_;                   // GEMM loads at the maximum clock
  std::vector<double> ln_speed_, ln_ratio_, capped_clocks_mhz_;  // capped GEMM loads
  std::vector<double> copy_rates_, peer_rates_;
};

}  // namespace

PowerFit fit_power(const std::vector<PowerRun>& runs, const std::map<std::string, double>& peak_flops,
                   const hw::PowerSpec& fallback, const std::string& tags) {
  return PowerFitter(runs, peak_flops, fallback).run(tags);
}

}  // namespace moesim::calibrate
