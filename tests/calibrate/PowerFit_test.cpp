// The power-cap clock model fit: a synthetic run made from known parameters gives them back, and the real
// H200 run gives the numbers of the hand calculation in
// data/calibration/2026-11-22-nvidia-h200-power/README.md.
#include "moesim/calibrate/PowerFit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "SyntheticPower.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

using testing::PowerTruth;
using testing::synthetic_power_run;

const std::map<std::string, double> kPeaks{{"bf16", 1000e12}, {"fp8", 2000e12}};

std::string error_of(const PowerRun& run) {
  try {
    fit_power({run}, kPeaks, hw::PowerSpec{}, "[C1]");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<accepted>";
}

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& n : notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PowerFit, RecoversTheParametersOfASyntheticRun) {
  const PowerTruth truth;  // idle 100, limit 700, compute 1000 W, gamma 2.5, beta 0.6, hbm 1e-10 J/B
  const PowerFit fit = fit_power({synthetic_power_run(truth)}, kPeaks, hw::PowerSpec{}, "[C1]");
  const hw::PowerSpec& w = fit.spec;
  EXPECT_TRUE(w.present);
  EXPECT_NEAR(w.idle_w, 100, 2);
  EXPECT_NEAR(w.limit_w, 700, 14);
  EXPECT_NEAR(w.compute_w_at_peak, 1000, 20);
  EXPECT_NEAR(w.speed_exponent, 2.5, 0.05);
  EXPECT_NEAR(w.clock_rate_exponent, 0.6, 0.012);
  EXPECT_NEAR(w.hbm_j_per_byte, 1e-10, 2e-12);
  EXPECT_EQ(w.link_j_per_byte, 0);
  EXPECT_EQ(fit.idle_loads, 1);
  EXPECT_EQ(fit.uncapped_loads, 2);
  EXPECT_EQ(fit.capped_loads, 3);
  EXPECT_EQ(fit.copy_loads, 2);
  EXPECT_EQ(fit.peer_loads, 0);
  // The model is exact here: every capped load gives the same exponent.
  for (double g : fit.speed_exponents) EXPECT_NEAR(g, 2.5, 1e-6);
  // No peer load: the link energy is 0, and both the source and a note say so.
  EXPECT_NE(w.source.find("link_pj_per_byte 0: no peer-copy load measured"), std::string::npos) << w.source;
  EXPECT_TRUE(mentions(fit.notes, "no peer-copy load")) << fit.notes.front();
  EXPECT_EQ(w.source.rfind("power_bench [C1] ", 0), 0u) << w.source;
}

TEST(PowerFit, PeerLoadsGiveTheLinkEnergy) {
  PowerTruth truth;
  truth.link_j = 5e-11;
  const PowerFit fit = fit_power({synthetic_power_run(truth)}, kPeaks, hw::PowerSpec{}, "[C1]");
  EXPECT_EQ(fit.peer_loads, 1);
  EXPECT_NEAR(fit.spec.link_j_per_byte, 5e-11, 1e-12);
  EXPECT_NEAR(fit.spec.hbm_j_per_byte, 1e-10, 2e-12);
  EXPECT_FALSE(mentions(fit.notes, "no peer-copy load"));
}

TEST(PowerFit, UnmeasuredEnergiesComeFromTheBaseWhenItHasThem) {
  PowerRun run = synthetic_power_run(PowerTruth{});
  std::erase_if(run.loads, [](const PowerLoad& l) { return l.kind == "copy"; });
  hw::PowerSpec base;
  base.present = true;
  base.hbm_j_per_byte = 1.2e-10;
  base.link_j_per_byte = 3e-11;
  const PowerFit fit = fit_power({run}, kPeaks, base, "[C1]");
  EXPECT_DOUBLE_EQ(fit.spec.hbm_j_per_byte, 1.2e-10);
  EXPECT_DOUBLE_EQ(fit.spec.link_j_per_byte, 3e-11);
  EXPECT_TRUE(mentions(fit.notes, "kept from the base profile"));
  // Without a base section they are 0.
  const PowerFit bare = fit_power({run}, kPeaks, hw::PowerSpec{}, "[C1]");
  EXPECT_EQ(bare.spec.hbm_j_per_byte, 0);
}

TEST(PowerFit, ClassifiesLoadsByClockAndReasons) {
  const PowerTruth t;
  PowerLoad l = testing::power_gemm(t, 800e12, 0.5, 1985e6);  // sw_power_cap but >= 99% of the maximum clock
  EXPECT_TRUE(uncapped_gemm(l, t.max_clock_hz));
  EXPECT_FALSE(capped_gemm(l, t.max_clock_hz));
  l = testing::power_gemm(t, 800e12, 0.5, 1950e6);  // capped at 97.5%: neither
  EXPECT_FALSE(uncapped_gemm(l, t.max_clock_hz));
  EXPECT_FALSE(capped_gemm(l, t.max_clock_hz));
  l = testing::power_gemm(t, 800e12, 1.0, 1500e6);
  EXPECT_TRUE(capped_gemm(l, t.max_clock_hz));
  EXPECT_FALSE(uncapped_gemm(l, t.max_clock_hz));
  l.clock_reasons = "hw_slowdown";  // slow, but not held by the power limit
  EXPECT_FALSE(capped_gemm(l, t.max_clock_hz));
  EXPECT_DOUBLE_EQ(busy_dynamic_power_w(testing::power_gemm(t, 800e12, 0.25, 2000e6), 100), 800);
}

TEST(PowerFit, MissingLoadsAreErrorsNamingTheFile) {
  PowerRun run = synthetic_power_run(PowerTruth{}, "runs/power.json");
  PowerRun no_uncapped = run;
  std::erase_if(no_uncapped.loads, [&](const PowerLoad& l) { return uncapped_gemm(l, run.max_clock_hz); });
  EXPECT_EQ(
      error_of(no_uncapped).rfind("runs/power.json: power_bench: no GEMM load ran at the maximum clock", 0),
      0u)
      << error_of(no_uncapped);
  PowerRun no_capped = run;
  std::erase_if(no_capped.loads, [&](const PowerLoad& l) { return capped_gemm(l, run.max_clock_hz); });
  EXPECT_EQ(
      error_of(no_capped).rfind("runs/power.json: power_bench: no GEMM load was held by the power limit", 0),
      0u)
      << error_of(no_capped);
  PowerRun no_idle = run;
  std::erase_if(no_idle.loads, [](const PowerLoad& l) { return l.kind == "idle"; });
  EXPECT_EQ(error_of(no_idle),
            "runs/power.json: power_bench: no idle load (--loads idle,...): the idle power "
            "cannot be fitted");
  PowerRun no_limit = run;
  no_limit.limit_w = 0;
  EXPECT_NE(error_of(no_limit).find("no enforced power limit"), std::string::npos);
}

TEST(PowerFit, MaxClockRateFactor) {
  EXPECT_DOUBLE_EQ(max_clock_rate_factor(1500e6, 2000e6, 0.6), std::pow(2000.0 / 1500.0, 0.6));
  EXPECT_DOUBLE_EQ(max_clock_rate_factor(2000e6, 2000e6, 0.6), 1.0);
  EXPECT_DOUBLE_EQ(max_clock_rate_factor(2100e6, 2000e6, 0.6), 1.0);  // never slows a case down
  EXPECT_DOUBLE_EQ(max_clock_rate_factor(0, 2000e6, 0.6), 1.0);
}

TEST(PowerFit, ModelledPowerReproducesTheSyntheticLoads) {
  PowerTruth truth;
  truth.link_j = 5e-11;
  const PowerRun run = synthetic_power_run(truth);
  hw::PowerSpec w;
  w.idle_w = truth.idle_w;
  w.compute_w_at_peak = truth.compute_w;
  w.speed_exponent = truth.gamma;
  w.hbm_j_per_byte = truth.hbm_j;
  w.link_j_per_byte = truth.link_j;
  for (const PowerLoad& l : run.loads)
    EXPECT_NEAR(modelled_power_w(w, l, truth.peak), l.power_w, 1e-9) << l.load;
}

/** @brief Every fitted number, the source text and the notes are the same, bit for bit. */
void expect_same_fit(const PowerFit& a, const PowerFit& b) {
  EXPECT_EQ(a.spec.present, b.spec.present);
  EXPECT_EQ(a.spec.limit_w, b.spec.limit_w);
  EXPECT_EQ(a.spec.idle_w, b.spec.idle_w);
  EXPECT_EQ(a.spec.compute_w_at_peak, b.spec.compute_w_at_peak);
  EXPECT_EQ(a.spec.hbm_j_per_byte, b.spec.hbm_j_per_byte);
  EXPECT_EQ(a.spec.link_j_per_byte, b.spec.link_j_per_byte);
  EXPECT_EQ(a.spec.speed_exponent, b.spec.speed_exponent);
  EXPECT_EQ(a.spec.clock_rate_exponent, b.spec.clock_rate_exponent);
  EXPECT_EQ(a.spec.source, b.spec.source);
  EXPECT_EQ(a.idle_loads, b.idle_loads);
  EXPECT_EQ(a.uncapped_loads, b.uncapped_loads);
  EXPECT_EQ(a.capped_loads, b.capped_loads);
  EXPECT_EQ(a.copy_loads, b.copy_loads);
  EXPECT_EQ(a.peer_loads, b.peer_loads);
  EXPECT_EQ(a.speed_exponents, b.speed_exponents);
  EXPECT_EQ(a.notes, b.notes);
}

// power_bench's overlap loads (an SM-driven copy alone, and beside a GEMM) have no term in the model:
// fit_power passes over them, whatever their numbers.
TEST(PowerFit, SmCopyLoadsDoNotChangeTheFit) {
  const PowerTruth t;
  const PowerRun run = synthetic_power_run(t);
  PowerRun with_overlap = run;
  PowerLoad both = testing::power_gemm(t, 800e12, 1.0, 0.7 * t.max_clock_hz);  // capped, as a GEMM would be
  both.kind = "gemm+smcopy";
  both.load = "gemm+smcopy:8192:8192:8192:20";
  both.power_w = t.limit_w;
  with_overlap.loads.push_back(both);
  PowerLoad copy = testing::power_copy(t, "copy", 450e9, 1.0);
  copy.kind = "smcopy";
  copy.load = "smcopy:20";
  copy.power_w = 400;
  with_overlap.loads.push_back(copy);
  expect_same_fit(fit_power({with_overlap}, kPeaks, hw::PowerSpec{}, "[C1]"),
                  fit_power({run}, kPeaks, hw::PowerSpec{}, "[C1]"));
}

// The committed H200 run; the bounds come from the hand calculation (idle 124.3 W; duty-0.25 GEMM: 883 W of
// dynamic power at 798 TF/s, about 1.1 W per TF/s of the 989 TF/s peak; capped 8192^3: gamma 2.5 at full
// duty, 2.8 at 0.75; copies 436 W / 4.24e12 B/s), not from running this code.
TEST(PowerFit, TheH200RunGivesTheHandCalculation) {
  const BenchResults results =
      load_bench_results({std::string(MOESIM_CALIBRATION_DATA) + "/2026-11-22-nvidia-h200-power/power.json"});
  ASSERT_EQ(results.power.size(), 1u);
  ASSERT_EQ(results.power[0].loads.size(), 13u);
  EXPECT_EQ(results.power[0].limit_w, 700);
  EXPECT_EQ(results.power[0].max_clock_hz, 1980e6);
  const PowerFit fit = fit_power(results.power, {{"bf16", 989e12}}, hw::PowerSpec{}, "[C2]");
  const hw::PowerSpec& w = fit.spec;
  EXPECT_DOUBLE_EQ(w.limit_w, 700);
  EXPECT_NEAR(w.idle_w, 124.3, 0.1);
  EXPECT_GE(w.compute_w_at_peak, 1050);
  EXPECT_LE(w.compute_w_at_peak, 1130);
  EXPECT_GE(w.speed_exponent, 2.2);
  EXPECT_LE(w.speed_exponent, 3.0);
  EXPECT_GE(w.clock_rate_exponent, 0.45);
  EXPECT_LE(w.clock_rate_exponent, 0.75);
  EXPECT_GE(w.hbm_j_per_byte, 0.9e-10);
  EXPECT_LE(w.hbm_j_per_byte, 1.15e-10);
  EXPECT_EQ(w.link_j_per_byte, 0);   // one GPU: no peer load
  EXPECT_EQ(fit.uncapped_loads, 2);  // duty 0.5 (1967 MHz) and 0.25 (1980 MHz)
  EXPECT_EQ(fit.capped_loads, 8);
  EXPECT_EQ(fit.copy_loads, 2);
}

// The same through the reader: a power.json with gemm+smcopy and smcopy records (as power_bench writes them)
// is accepted, those loads are dropped with a note, and the fit is exactly that of the file without them.
TEST(PowerFit, APowerFileWithOverlapLoadsFitsAsWithoutThem) {
  const std::string path = std::string(MOESIM_CALIBRATION_DATA) + "/2026-11-22-nvidia-h200-power/power.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str());
  doc["results"].push_back(nlohmann::json::parse(R"({
    "load": "gemm+smcopy:8192:8192:8192:20", "kind": "gemm+smcopy", "gpu": 0, "m": 8192, "n": 8192,
    "k": 8192, "dtype": "bf16", "bytes": 1073741824.0, "ctas": 20, "target_duty": 1.0, "duty": 0.96,
    "busy_tflops": 610.5, "first_burst_tflops": 760.2, "copy_rate_GBps": 402.7, "copy_first_burst_GBps": 455.1,
    "copy_busy_ms": 1391.2, "copy_reps": 3, "sm_clock_mhz": 1402.3, "sm_clock_min_mhz": 1335,
    "sm_clock_max_mhz": 1500, "power_w": 698.7, "samples": 339, "clock_reasons": "sw_power_cap"})"));
  doc["results"].push_back(nlohmann::json::parse(R"({
    "load": "smcopy:20", "kind": "smcopy", "gpu": 0, "bytes": 1073741824.0, "ctas": 20, "target_duty": 1.0,
    "duty": 0.998, "busy_GBps": 471.3, "first_burst_GBps": 474.0, "sm_clock_mhz": 1980.0,
    "sm_clock_min_mhz": 1980, "sm_clock_max_mhz": 1980, "power_w": 301.4, "samples": 461,
    "clock_reasons": "none"})"));
  BenchResults with_overlap;
  add_bench_document(doc.dump(1), "power.json", with_overlap);
  const BenchResults plain = load_bench_results({path});
  ASSERT_EQ(with_overlap.power.size(), 1u);
  EXPECT_EQ(with_overlap.power[0].loads.size(), plain.power[0].loads.size());
  EXPECT_EQ(with_overlap.ignored,
            (std::vector<std::string>{"power.json: power_bench load gemm+smcopy:8192:8192:8192:20",
                                      "power.json: power_bench load smcopy:20"}));
  const std::map<std::string, double> peaks{{"bf16", 989e12}};
  expect_same_fit(fit_power(with_overlap.power, peaks, hw::PowerSpec{}, "[C2]"),
                  fit_power(plain.power, peaks, hw::PowerSpec{}, "[C2]"));

  // Any other unknown kind is still an error.
  doc["results"].back()["kind"] = "smcopies";
  try {
    BenchResults out;
    add_bench_document(doc.dump(1), "power.json", out);
    ADD_FAILURE() << "an unknown kind was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("= \"smcopies\": expected idle, gemm, copy or peer"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moesim::calibrate
