// Issue 32's generalization test: an implementation profile learned from ONE committed trace per (style, GPU)
// predicts every other committed record of that style on that GPU (other models, token counts, layer counts,
// EP 1/2/4, regular and FarSkip, forward and training), beside the shipped profile of the style (no trace).
//
// The records are data/torch-stacks (kernels/torch_stacks on H100 x4, x2 and H200 x4). What the test asserts
// is what the measurement shows to hold (the report prints the errors): the learned profiles' step-time
// errors are bounded per style, they beat the shipped defaults, and the FarSkip speedup is predicted within
// the spread the same configuration shows between device calls, which the H100 data folders measure (the x4
// and x2 machines ran the same EP 2 and EP 1 configurations). It also prints how a profile learned on one GPU
// predicts the other's records: better than the shipped default, which is all it asserts of it. The FarSkip
// pairs measured interleaved (EP 2 and EP 4, H100 and H200) fix a speedup to about 0.01-0.02: against them
// the learned profiles' speedup error is asserted within 0.02 and below that of predicting 1.000, per EP.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/validate/Measured.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kData = std::string(MOESIM_TEST_DATA_DIR) + "/data/torch-stacks";

const std::vector<std::string>& gpus() {
  static const std::vector<std::string> names = {"h100", "h200"};
  return names;
}

/**
 * The one training trace each style learns from, per GPU: Qwen3-30B-A3B, 2048 tokens per rank, 2 layers,
 * forward + backward. On H200 all four from the 2026-11-28 x2-c lease (EP 2 for kernels/torch_stacks' styles,
 * EP 1 for transformers'), whose records carry the host probe, so each profile carries its host's speed to
 * every record that has one, and whose traces hold the qk_norm range, so Qwen3's per-head q/k norms reach
 * only models that have them. On H100: kernels/torch_stacks' styles from the 2026-11-26 x4 call (EP 4);
 * transformers' grouped_mm from the 2026-11-28 x1 lease (its record has the probe), eager from a 2026-11-27
 * lease whose record says when the untraced forward returned, so the profiler's overhead comes out per pass
 * (another 2026-11-27 H100 lease had a host half as fast as the x2 and x4 leases': its records are test data
 * only). No H100 trace has the qk_norm range yet.
 */
const std::map<std::pair<std::string, std::string>, std::string>& training_traces() {
  static const std::map<std::pair<std::string, std::string>, std::string> traces = {
      {{"grouped", "h100"},
       "/2026-11-26-nvidia-h100-x4/ep4/"
       "qwen3-30b-a3b.grouped.ep4.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"loop", "h100"},
       "/2026-11-26-nvidia-h100-x4/ep4/"
       "qwen3-30b-a3b.loop.ep4.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"hf-grouped_mm", "h100"},
       "/2026-11-28-nvidia-h100-x1/hf/"
       "qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"hf-eager", "h100"},
       "/2026-11-27-nvidia-h100-x1-hfnorm/hf/"
       "qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"grouped", "h200"},
       "/2026-11-28-nvidia-h200-x2-c/ep2/"
       "qwen3-30b-a3b.grouped.ep2.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"loop", "h200"},
       "/2026-11-28-nvidia-h200-x2-c/ep2/"
       "qwen3-30b-a3b.loop.ep2.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"hf-grouped_mm", "h200"},
       "/2026-11-28-nvidia-h200-x2-c/hf/"
       "qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {{"hf-eager", "h200"},
       "/2026-11-28-nvidia-h200-x2-c/hf/"
       "qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
  };
  return traces;
}

// Whether `record` is of the configuration a profile learned from (on any machine): left out of every row.
bool is_training_record(const traces::TorchStackRecord& record) {
  const std::string& trace = training_traces().at({record.style, "h100"});  // one configuration per style
  const std::string config = trace.substr(trace.rfind('/') + 1);            // NAME.rank0.trace.json.gz
  return config.rfind(record.name + ".rank0.", 0) == 0;
}

struct Errors {
  std::vector<double> time_pct, speedup;
  int within(double pct) const {
    return static_cast<int>(
        std::count_if(time_pct.begin(), time_pct.end(), [&](double e) { return std::abs(e) <= pct; }));
  }
  double mean_abs() const {
    double s = 0;
    for (double e : time_pct) s += std::abs(e);
    return time_pct.empty() ? 0 : s / static_cast<double>(time_pct.size());
  }
  double median_abs() const {
    std::vector<double> a;
    for (double e : time_pct) a.push_back(std::abs(e));
    std::sort(a.begin(), a.end());
    return a.empty() ? 0 : a[a.size() / 2];
  }
  double mean_speedup() const {
    double s = 0;
    for (double e : speedup) s += e;
    return speedup.empty() ? 0 : s / static_cast<double>(speedup.size());
  }
};

// (style, GPU) -> its errors, over every phase and per phase ("forward", "train").
struct Bucket {
  Errors all;
  std::map<std::string, Errors> by_phase;
};
using Buckets = std::map<std::pair<std::string, std::string>, Bucket>;

// One (style, GPU, EP) row of the interleaved FarSkip pairs: sums over its pairs.
struct InterleavedRow {
  int pairs = 0, left_out = 0;
  double half_width = 0, learned = 0, from_one = 0;
  double mean(double sum) const { return pairs == 0 ? 0 : sum / pairs; }
  double learned_error() const { return mean(learned); }
  double from_one_error() const { return mean(from_one); }
};
using InterleavedRows = std::map<std::tuple<std::string, std::string, int>, InterleavedRow>;

class TorchStackGeneralization : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    records_ = new std::vector<traces::TorchStackRecord>();
    for (const auto& r : find_torch_stack_records({kData})) {
      // 2026-11-27's H100 lease issued PyTorch ops about half as fast as every other lease (its README): what
      // its host-bound records test is a --host-speed nobody measured there. With them, transformers' stacks
      // on H100 come to median 19.8% (eager) and 11.1% (grouped_mm) shipped, 22.2% and 12.5% learned.
      if (r.file.find("/2026-11-27-nvidia-h100-hf/") != std::string::npos) continue;
      // One lease's plain-trace comparison (PlainTraces_test): configurations the other H200 folders hold,
      // there to learn from.
      if (r.file.find("/2026-11-29-nvidia-h200-x1-plain/") != std::string::npos) continue;
      if (r.status == "ok" && r.scale == 1) records_->push_back(r);
    }
    learned_ = new std::map<std::pair<std::string, std::string>, std::string>();
    for (const std::string& gpu : gpus()) {
      const hw::HwProfile hw = hw::load_profile(gpu);
      for (const auto& [key, trace] : training_traces()) {
        const auto& [style, trace_gpu] = key;
        if (trace_gpu != gpu) continue;
        const std::string name = "learned-" + style + "-" + gpu;
        const auto learned =
            calibrate::learn_implementation({calibrate::load_traced_stack(kData + trace, {})}, hw, name);
        const std::string file = testing::TempDir() + "/" + name + ".json";
        std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
        (*learned_)[{style, gpu}] = file;
      }
    }
  }
  static void TearDownTestSuite() {
    delete records_;
    delete learned_;
  }

  // Every style simulated with the profile learned on `gpu`'s trace, whatever the record's GPU.
  static ImplementationChoice learned_on(const std::string& gpu) {
    ImplementationChoice choice;
    for (const auto& [key, file] : *learned_)
      if (key.second == gpu) choice.by_style[key.first] = file;
    return choice;
  }
  // Each record simulated with the profile learned on its own GPU's trace.
  static ImplementationChoice learned_per_gpu() {
    ImplementationChoice choice;
    choice.by_style_hw = *learned_;
    return choice;
  }

  // Errors per (style, GPU) over the records no profile learned from, with `choice`: the records of pairs
  // timed as separate configurations, or (`interleaved`) those of the interleaved pairs.
  // Where a record and its profile both carry a host probe, the record's host runs at the speed its probe
  // says.
  static Buckets errors(const ImplementationChoice& choice, bool interleaved = false,
                        bool probed_only = false) {
    TorchStackOptions options;
    options.impl = choice;
    options.host_from_probe = true;
    Buckets out;
    for (const TorchStackComparison& c : compare_torch_stacks(*records_, options)) {
      if (is_training_record(c.record) || c.record.speedup.has_value() != interleaved) continue;
      if (probed_only && c.record.host_probe_us_mean <= 0) continue;
      Bucket& b = out[{c.record.style, profile_for_device(c.record.device)}];
      for (Errors* e : {&b.all, &b.by_phase[c.record.phase]}) {
        e->time_pct.push_back(c.error_pct());
        if (c.measured_speedup && c.predicted_speedup)
          e->speedup.push_back(std::abs(*c.predicted_speedup - *c.measured_speedup));
      }
    }
    return out;
  }

  static void print(const std::string& what, const Buckets& buckets) {
    const auto line = [&](const std::string& style, const std::string& gpu, const std::string& phase,
                          const Errors& e) {
      std::cout << fmt::format(
          "{:<14} {:<14} {:<4} {:<7} {:>3} records: |step error| median {:5.1f}% mean {:5.1f}%, within 10% "
          "{:>3}, within 15% {:>3}; {:>2} FarSkip pairs: |speedup error| mean {:.3f}\n",
          what, style, gpu, phase, e.time_pct.size(), e.median_abs(), e.mean_abs(), e.within(10),
          e.within(15), e.speedup.size(), e.mean_speedup());
    };
    for (const auto& [key, b] : buckets) {
      line(key.first, key.second, "all", b.all);
      for (const auto& [phase, e] : b.by_phase) line(key.first, key.second, phase, e);
    }
  }

  // Per (style, GPU, EP), the interleaved pairs with `choice`, printed; a pair whose regular record is the
  // configuration a profile learned from is left out (counted in left_out).
  static InterleavedRows interleaved_rows(const std::string& what, const ImplementationChoice& choice) {
    TorchStackOptions options;
    options.impl = choice;
    InterleavedRows rows;
    for (const TorchStackComparison& c : compare_torch_stacks(*records_, options)) {
      const traces::TorchStackRecord& r = c.record;
      if (!r.speedup || r.schedule != "farskip" || !c.predicted_speedup) continue;
      InterleavedRow& row = rows[{r.style, profile_for_device(r.device), r.ep}];
      traces::TorchStackRecord regular = r;
      regular.name.replace(regular.name.find(".farskip."), 9, ".regular.");
      if (is_training_record(regular)) {
        ++row.left_out;
        continue;
      }
      ++row.pairs;
      row.half_width += (r.speedup->high - r.speedup->low) / 2;
      row.learned += std::abs(*c.predicted_speedup - r.speedup->estimate);
      row.from_one += std::abs(r.speedup->estimate - 1);
    }
    for (const auto& [key, row] : rows)
      std::cout << fmt::format(
          "{}/interleaved {:<8} {} EP {}: {:>2} pairs ({} left out), measured 95% half-width mean {:.3f}; "
          "|speedup error| mean {:.3f} predicted, {:.3f} predicting 1.000\n",
          what, std::get<0>(key), std::get<1>(key), std::get<2>(key), row.pairs, row.left_out,
          row.mean(row.half_width), row.learned_error(), row.from_one_error());
    return rows;
  }

  static std::vector<traces::TorchStackRecord>* records_;
  static std::map<std::pair<std::string, std::string>, std::string>* learned_;
};

std::vector<traces::TorchStackRecord>* TorchStackGeneralization::records_ = nullptr;
std::map<std::pair<std::string, std::string>, std::string>* TorchStackGeneralization::learned_ = nullptr;

// The spread of the measured FarSkip speedup between two device calls of the same configuration on `gpu`.
double measured_speedup_spread(const std::vector<traces::TorchStackRecord>& records, const std::string& gpu) {
  std::map<std::string, std::map<std::string, std::pair<double, double>>>
      by_config;  // key -> folder -> reg, fs
  for (const auto& r : records) {
    if (profile_for_device(r.device) != gpu || r.speedup) continue;  // pairs timed as separate configurations
    auto& p = by_config[r.config_key()][r.file.substr(0, r.file.rfind('/'))];
    (r.schedule == "regular" ? p.first : p.second) = r.step_ms_p50;
  }
  std::vector<double> spreads;
  for (const auto& [key, folders] : by_config) {
    std::vector<double> speedups;
    for (const auto& [folder, p] : folders)
      if (p.first > 0 && p.second > 0) speedups.push_back(p.first / p.second);
    if (speedups.size() >= 2)
      spreads.push_back(*std::max_element(speedups.begin(), speedups.end()) -
                        *std::min_element(speedups.begin(), speedups.end()));
  }
  double sum = 0;
  for (double s : spreads) sum += s;
  std::cout << fmt::format(
      "measured FarSkip speedup on {}, same configuration on two device calls: {} pairs, |difference| mean "
      "{:.3f}\n",
      gpu, spreads.size(), spreads.empty() ? 0 : sum / static_cast<double>(spreads.size()));
  return spreads.empty() ? 0 : sum / static_cast<double>(spreads.size());
}

// The interleaved pairs' measurement at EP `ep` (data/torch-stacks/*-interleaved: the same 28 pairs per EP
// measured several times, in one device call and in others): the mean half-width of the pairs' 95% intervals
// and the mean over configurations of the largest difference between measurements on one GPU.
struct Precision {
  double half_width = 0, spread = 0;
  int pairs = 0, configurations = 0;
};

Precision interleaved_precision(const std::vector<traces::TorchStackRecord>& records, int ep) {
  std::map<std::string, std::vector<double>> by_config;
  Precision p;
  for (const auto& r : records) {
    if (!r.speedup || r.schedule != "farskip" || r.ep != ep) continue;
    by_config[r.device + r.config_key()].push_back(r.speedup->estimate);
    p.half_width += (r.speedup->high - r.speedup->low) / 2;
    ++p.pairs;
  }
  for (const auto& [key, speedups] : by_config) {
    if (speedups.size() < 2) continue;
    p.spread += *std::max_element(speedups.begin(), speedups.end()) -
                *std::min_element(speedups.begin(), speedups.end());
    ++p.configurations;
  }
  p.half_width /= std::max(p.pairs, 1);
  p.spread /= std::max(p.configurations, 1);
  std::cout << fmt::format(
      "interleaved FarSkip speedups at EP {}: {} pairs, 95% interval half-width mean {:.3f}; {} "
      "configurations "
      "measured more than once, largest |difference| mean {:.3f}\n",
      ep, p.pairs, p.half_width, p.configurations, p.spread);
  return p;
}

TEST_F(TorchStackGeneralization, InterleavedSpeedupsArePreciseAndPredicted) {
  // EP 2: 28 pairs x 4 measurements on 2x H100 (three machines), x 1 on 2x H200, and 70 pairs on 4x H200 (the
  // x4i plan's EP 2 bridge: 28 + 26 + 16, two calls cut short by their deadline).
  const Precision ep2 = interleaved_precision(*records_, 2);
  ASSERT_EQ(ep2.pairs, 210);
  // What the data shows (0.012 and 0.015; the pairs timed as separate configurations: 0.051 and 0.099 on
  // the same configurations, measured with 10 steps each in 2 calls): a speedup fixed to about 0.01.
  EXPECT_LE(ep2.half_width, 0.015);
  EXPECT_LE(ep2.spread, 0.02);
  // EP 4: 28 pairs x 4 measurements on 4x H200 (three calls, two machines) and x 1 on 4x H100.
  const Precision ep4 = interleaved_precision(*records_, 4);
  ASSERT_EQ(ep4.pairs, 140);
  EXPECT_LE(ep4.half_width, 0.015);  // 0.013
  EXPECT_LE(ep4.spread, 0.02);       // 0.013
  print("learned/interleaved", errors(learned_per_gpu(), true));
  print("shipped/interleaved", errors(ImplementationChoice{}, true));
  interleaved_rows("shipped", ImplementationChoice{});
  const InterleavedRows learned = interleaved_rows("learned", learned_per_gpu());
  // The interleaved pairs per style (14 configurations each): H100 EP 2, 4 measurements; H200 EP 2, 14 on
  // the x2 machine and 14 + 12 + 8 (grouped) or 14 + 14 + 8 (loop) on the x4 machines; H200 EP 4, 4
  // measurements (the training configuration's 4 pairs left out); H100 EP 4, 1 measurement (1 left out).
  const std::map<std::tuple<std::string, std::string, int>, int> expected_pairs = {
      {{"grouped", "h100", 2}, 56}, {{"loop", "h100", 2}, 56},    {{"grouped", "h200", 2}, 48},
      {{"loop", "h200", 2}, 50},    {{"grouped", "h200", 4}, 56}, {{"loop", "h200", 4}, 56},
      {{"grouped", "h100", 4}, 14}, {{"loop", "h100", 4}, 14}};
  for (const auto& [key, pairs] : expected_pairs) {
    const auto& [style, gpu, ep] = key;
    SCOPED_TRACE(fmt::format("{} {} EP {}", style, gpu, ep));
    const InterleavedRow& row = learned.at(key);
    ASSERT_EQ(row.pairs + row.left_out, pairs);
    // The measured speedups lie near 1 (0.975-1.084), so "FarSkip changes nothing" (1.000) is the baseline
    // a prediction must beat: its error is the speedups' mean distance from 1. The learned profiles beat it
    // in every row (grouped 0.011/0.013/0.018/0.012 against 0.016/0.015/0.019/0.019 on H100 EP 2, H200 EP 2,
    // H200 EP 4, H100 EP 4; loop 0.006/0.006/0.010/0.009 against 0.009/0.009/0.012/0.015). H200 grouped EP 4
    // rose from 0.017 with MLA's RoPE at its real size (2026-11-29): DeepSeek-V2-Lite's longer q/k
    // preparation hides more of FarSkip's Dispatch, 1.024 -> 1.040 predicted where 1.003-1.017 was measured.
    // With the H200 x2 machine's 14 pairs per style alone they did not (0.015 vs 0.012, 0.008 vs 0.007): the
    // x4 machines' EP 2 bridge added 34-36.
    EXPECT_LT(row.learned_error(), row.from_one_error());
    // The issue's later target, met where the measurement is this precise (half-width 0.010-0.015).
    EXPECT_LE(row.learned_error(), 0.02);
  }
}

// The issue's bar for host-bound stacks is against the range measured across machines: a host-bound step
// moves with the host (1.9x between processes on one 4x H200 host,
// data/calibration/2026-11-27-nvidia-h200-x4-corun), so one run's p50 is one draw. Per configuration timed on
// two or more leases, host-bound on each (issue time at least 90% of the step), the shipped profile's error
// is its distance to the nearest end of the measured range, 0 inside it.
TEST_F(TorchStackGeneralization, HostBoundStepsAgainstTheRangeAcrossMachines) {
  struct Config {
    std::vector<double> measured;
    double predicted = 0;
    bool host_bound = true;
  };
  std::map<std::pair<std::string, std::string>, std::map<std::string, Config>> configs;  // (style, GPU) ->
  for (const TorchStackComparison& c : compare_torch_stacks(*records_, TorchStackOptions{})) {
    const traces::TorchStackRecord& r = c.record;
    if (is_training_record(r) || r.speedup) continue;
    Config& config = configs[{r.style, profile_for_device(r.device)}][r.config_key() + "|" + r.schedule];
    config.measured.push_back(r.step_ms_p50);
    config.predicted = c.predicted_ms;
    config.host_bound = config.host_bound && r.issue_ms_p50 >= 0.9 * r.step_ms_p50;
  }
  std::map<std::pair<std::string, std::string>, Errors> against_range, against_p50;
  for (const auto& [key, by_config] : configs) {
    for (const auto& [name, config] : by_config) {
      if (config.measured.size() < 2 || !config.host_bound) continue;
      const auto [low, high] = std::minmax_element(config.measured.begin(), config.measured.end());
      const double nearest = std::clamp(config.predicted, *low, *high);
      against_range[key].time_pct.push_back(100.0 * (config.predicted - nearest) / nearest);
      for (double m : config.measured)
        against_p50[key].time_pct.push_back(100.0 * (config.predicted - m) / m);
    }
  }
  for (const auto& [key, e] : against_range)
    std::cout << fmt::format(
        "host-bound {:<14} {}: {:>2} configurations on 2+ leases: |step error| against the range median "
        "{:5.1f}% "
        "mean {:5.1f}%, within 15% {:>2}; against each lease's p50 median {:5.1f}%\n",
        key.first, key.second, e.time_pct.size(), e.median_abs(), e.mean_abs(), e.within(15),
        against_p50.at(key).median_abs());
  // Measured (shipped profiles): transformers' eager experts 7.9% on H100 (6 configurations) and 16.4% on
  // H200 (6), `loop` 0.6% on H100 (21; no H200 configuration is host-bound on two leases); `grouped`'s
  // host-bound configurations (its EP > 1 forward steps) 18.4% on H100 (22.2% with the all-to-all launch's
  // host cost at 142 us instead of 240): every step of the EP path is charged within the hosts' spread, and
  // the rest is the slowest rank's process (data/calibration/2026-11-27-nvidia-h200-x4-ep-path).
  for (const auto& [style, gpu, bound] :
       {std::tuple{"hf-eager", "h100", 15.0}, std::tuple{"loop", "h100", 15.0},
        std::tuple{"hf-eager", "h200", 20.0}}) {
    ASSERT_TRUE(against_range.count({style, gpu})) << style << " " << gpu;
    EXPECT_GE(against_range.at({style, gpu}).time_pct.size(), 6u) << style << " " << gpu;
    EXPECT_LE(against_range.at({style, gpu}).median_abs(), bound) << style << " " << gpu;
  }
}

// The kernels/torch_stacks styles learn from an EP > 1 trace (H100: EP 4; H200: EP 2), whose permute and
// routed experts hold the expert parallel path (split-size exchange, chunk sorts). At EP 1 the learned
// profiles run the base's form of those ops at the traced host's speed (calibrate::learn_implementation);
// charging the traced EP 4 work there had put Qwen3's grouped EP 1 forward at 9.0 ms (H100-learned)
// against 4.3-5.3 measured.
TEST_F(TorchStackGeneralization, ProfilesLearnedAboveEp1PredictEp1) {
  TorchStackOptions options;
  options.impl = learned_per_gpu();
  options.host_from_probe = true;
  std::map<std::pair<std::string, std::string>, Errors> ep1;
  for (const TorchStackComparison& c : compare_torch_stacks(*records_, options)) {
    if (c.record.ep != 1 || (c.record.style != "grouped" && c.record.style != "loop")) continue;
    ep1[{c.record.style, profile_for_device(c.record.device)}].time_pct.push_back(c.error_pct());
  }
  for (const auto& [key, e] : ep1)
    std::cout << fmt::format(
        "learned at EP > 1 {:<8} {}: {:>3} EP 1 records: |step error| median {:5.1f}% mean "
        "{:5.1f}%\n",
        key.first, key.second, e.time_pct.size(), e.median_abs(), e.mean_abs());
  ASSERT_EQ(ep1.size(), 4u);  // grouped and loop on H100 and H200
  for (const auto& [key, e] : ep1) EXPECT_LE(e.median_abs(), 15.0) << key.first << " " << key.second;
}

// Host-bound steps move with the process that issues them (1.9x across hosts, up to 1.6x between processes of
// one host). Records since 2026-11-27's evening carry each rank's host probe
// (kernels/torch_stacks/host_probe.py), and a profile learned from such a record's trace carries its probe:
// each record then runs at the speed its probe says against the profile's. Learned from the H100 x2 lease's
// EP 2 training traces, the other records with probes (that lease's and an H200 lease's) went from median
// |step error| 25.7% to 16.2%, the loop's from 34.5% to 0.8%, grouped's from 25.7% to 18.9% (its EP 1 forward
// stays 15-19% slow: the base's form of the EP path at the traced host's speed).
TEST_F(TorchStackGeneralization, HostProbeCarriesALearnedProfileToOtherHosts) {
  const std::string folder = kData + "/2026-11-27-nvidia-h100-x2-probe/ep/";
  ImplementationChoice choice;
  std::set<std::string> learned_from;
  for (const char* style : {"grouped", "loop"}) {
    const std::string trace =
        folder + "qwen3-30b-a3b." + style + ".ep2.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz";
    const auto learned = calibrate::learn_implementation(
        {calibrate::load_traced_stack(trace, {})}, hw::load_profile("h100"), std::string("probe-") + style);
    ASSERT_GT(learned.profile.host_probe_us, 0) << style;
    const std::string file = testing::TempDir() + "/probe-" + style + ".json";
    std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
    choice.by_style[style] = file;
    learned_from.insert(*traces::record_beside_trace(trace));
  }
  std::vector<traces::TorchStackRecord> probed;
  for (const auto& r : *records_)
    if (r.host_probe_us_mean > 0 && !learned_from.count(r.file)) probed.push_back(r);
  ASSERT_GE(probed.size(), 20u);
  std::map<std::string, std::map<bool, Errors>> by_style;  // style ("all" too) -> with probe? ->
  for (bool with_probe : {false, true}) {
    TorchStackOptions options;
    options.impl = choice;
    options.host_from_probe = with_probe;
    for (const TorchStackComparison& c : compare_torch_stacks(probed, options)) {
      by_style["all"][with_probe].time_pct.push_back(c.error_pct());
      by_style[c.record.style][with_probe].time_pct.push_back(c.error_pct());
      if (!with_probe) {
        EXPECT_EQ(c.host_speed, 1);
      }
    }
  }
  for (const auto& [style, e] : by_style)
    std::cout << fmt::format(
        "host probe {:<8} {:>2} records: |step error| median {:5.1f}% without, {:5.1f}% with\n", style,
        e.at(true).time_pct.size(), e.at(false).median_abs(), e.at(true).median_abs());
  EXPECT_LT(by_style["all"][true].median_abs(), by_style["all"][false].median_abs());
  EXPECT_LE(by_style["all"][true].median_abs(), 20.0);
  EXPECT_LE(by_style["loop"][true].median_abs(), 10.0);
}

TEST_F(TorchStackGeneralization, LearnedFromOneTracePerStyleAndGpu) {
  const Buckets with_learned = errors(learned_per_gpu());
  const Buckets with_shipped = errors(ImplementationChoice{});
  print("learned", with_learned);
  print("shipped", with_shipped);
  const double h100_spread = measured_speedup_spread(*records_, "h100");
  ASSERT_EQ(with_learned.size(), 8u);  // 4 styles x 2 GPUs
  // Learned against shipped, where the measurement separates them: transformers' eager experts block the host
  // at every expert, so how much of a traced step's host time the profiler added decides the learned profile.
  // Its H200 trace's record says when the untraced forward returned: the profiler's share comes out per pass
  // (forward 0.711, backward 0.995 of the traced time) and the learned profile beats the shipped one (mean
  // 14.3% against 20.7%; with one factor for the step, 0.903, the first lease's forward records' median was
  // 18.9% against 14.8%). On H100 the shipped profile stays ahead (13.9% against 15.3%; learned from the
  // x2 lease's trace, whose record does not say it, 22.6%: one factor for the step, 0.809, charges the
  // forward's host costs, the model's own ops among them, too much). Elsewhere the two are close and both are
  // bounded below: grouped 15.6% learned against 12.7% shipped on H100, 10.7% against 12.9% on H200;
  // loop 12.6/12.9% and 12.0/14.1%; transformers' grouped_mm, with the shipped profile of its own code
  // (`hf-grouped_mm`), 13.7/10.2% and 11.4/11.1%.
  // H200's profiles learned from the x2-c lease's traces (2026-11-28: host probe, qk_norm range) instead of
  // x2-b's (grouped, loop, transformers' grouped_mm) and a 2026-11-27 lease's (eager): median grouped 8.9% ->
  // 7.9%, transformers' eager 13.8% -> 10.8%, grouped_mm 6.9% -> 4.9%, loop 5.5% -> 7.9% (forward 8.6% ->
  // 11.5%: x2-c's host issued ops faster, probe 10.6 us against 11-14, and the records without a probe run at
  // its speed); H200-learned grouped on H100 20.4% -> 6.4%. With the norms charged to every model, as before
  // the range (the learner ignoring it), loop 6.7% and grouped's mean 10.7% (11.4%): the forward is short of
  // host time, and the norms' launches in models without them had made up part of it.
  EXPECT_LT(with_learned.at({"hf-eager", "h200"}).all.mean_abs(),
            with_shipped.at({"hf-eager", "h200"}).all.mean_abs());
  EXPECT_LT(with_shipped.at({"hf-eager", "h100"}).all.mean_abs(),
            with_learned.at({"hf-eager", "h100"}).all.mean_abs());
  // The shipped profiles with host costs in a step's context and index_add_ at its measured speed
  // (data/calibration, 2026-11-27 step-context and index-add): median |step error| grouped 12.8%/15.3%
  // (H100/H200; 23.2%/27.5% before either), loop 11.7%/14.8% (20.5%/19.1%), transformers' eager 12.3%/17.0%
  // (18.5%/22.6%). All too fast before, by a host that issues every op slower inside a step than in a
  // microbenchmark's loop, and by bf16 atomics four times slower than streaming. With attention at SDPA's
  // measured rate (read at its work, timed with the host's issue time left out: 2026-11-27 sdpa-held)
  // 13.9%/16.8%, 12.6%/15.5% and 12.5%/18.1%: the too-slow attention had hidden part of the misses that
  // remain. An all-to-all launch at its host cost inside a step (2026-11-27 op-context: 3.7x its warm
  // loop's) brings grouped to 11.9%/15.1% and loop to 12.2%/15.0%. Elementwise ops on PyTorch's generic path
  // (broadcast or strided operands: RMSNorm, RoPE, SwiGLU's halves, routing weights) at their measured
  // slowdown (2026-11-27 elementwise-paths, 1.0-3.7x their bytes' streaming time): grouped 8.7%/10.8%, loop
  // 10.3%/11.5%, transformers' eager 10.8%/14.9%, transformers' grouped_mm 20.7%/31.3% (33.8%/36.7%); with
  // Qwen3's per-head q/k RMSNorm charged, transformers' eager 11.0%/14.9% and grouped_mm 11.8%/26.4%. With
  // the ranks' host speed spread (2026-11-27 host-jitter: the slowest of the EP ranks sets each segment),
  // grouped 7.9%/9.5% and loop 9.6%/10.8% (forward host costs). Its own profile for transformers' grouped_mm
  // experts (three masked_fills, the routing weight on every row and a sum over the top-k where `grouped` has
  // a scatter-add): 10.1%/19.8% (9 records on H200). With the model's own ops around its layers (hf-eager,
  // hf-grouped_mm: positions, mask test and rotary tables before the first layer, the final RMSNorm after the
  // last; 27 records per GPU since 2026-11-27): transformers' grouped_mm 8.6%/14.1% -> 7.5%/8.1%, eager
  // 11.3%/18.2% -> 10.9%/17.6%; learned (the model's ops from the gaps between a trace's layer ranges)
  // grouped_mm 12.0%/11.9% -> 10.2%/9.1%, eager 17.1%/8.9% -> 20.1%/9.3% (H100's one profiler factor for the
  // step charges the new forward host costs too much; 10.8% learned from a trace with forward_issue_ms).
  // H100's transformers profiles learn from 2026-11-27 H100 x1 traces whose records have forward_issue_ms:
  // eager 20.1% -> 10.8%, grouped_mm 10.2% -> 12.6% (that lease's host issued Qwen3's grouped_mm forward in
  // 5.7 ms, the other H100 leases in 6.4-7.7). With an all-to-all launch at op_context's in-context median
  // as measured (240 us; 142 before) and 13 more H200 records (2026-11-27 x1-probe): grouped 6.0%/8.1%, loop
  // 9.5%/10.4%.
  for (const char* style : {"grouped", "loop", "hf-eager"}) {
    for (const char* gpu : {"h100", "h200"}) {
      if (std::string(style) == "hf-eager" && std::string(gpu) == "h200") continue;
      EXPECT_LE(with_shipped.at({style, gpu}).all.median_abs(), 15.0) << style << " " << gpu;
    }
  }
  // The 2026-11-27 H200 leases ran transformers' eager experts' forward steps up to 1.9x slower than the x4
  // lease (DeepSeek-V2-Lite 106.5 against 57.2 ms, Qwen3 158.0 against 81.9): the shipped profile's median
  // over the three leases is 17.6%.
  EXPECT_LE(with_shipped.at({"hf-eager", "h200"}).all.median_abs(), 20.0);
  EXPECT_LE(with_shipped.at({"hf-grouped_mm", "h100"}).all.median_abs(), 10.0);
  EXPECT_LE(with_shipped.at({"hf-grouped_mm", "h200"}).all.median_abs(), 10.0);
  // Bounds the measurement above shows (see the commit message and the README's table).
  const auto learned = [&](const char* style, const char* gpu) { return with_learned.at({style, gpu}).all; };
  EXPECT_LE(learned("grouped", "h100").median_abs(), 10.0);
  // The loop style's backward zero-fills and accumulates whole stacked expert weights per expert, learned as
  // expert_weights steps that scale with each model's experts: training median 6.0% on H100, 5.5% on H200
  // (17-21% over all phases before; forward stays host-noisy).
  EXPECT_LE(learned("loop", "h100").median_abs(), 10.0);
  EXPECT_LE(with_learned.at({"loop", "h100"}).by_phase.at("train").median_abs(), 10.0);
  EXPECT_LE(with_learned.at({"loop", "h200"}).by_phase.at("train").median_abs(), 10.0);
  // transformers' eager experts learned from a training trace: training median 10.2% (H100) and 11.3% (H200,
  // both per pass; 21.7% learned from the H200 x2 lease's trace with one factor and per-expert GEMMs at one
  // rate), from 51% and 50% when only a forward trace was there to learn from; forward 13.7% and 9.3%.
  // With kernels at PyTorch's elementwise floor learned as that floor and their operands' bytes (2026-11-28
  // elementwise-floor), not as the bytes their time would move, and the backward loop's last expert no longer
  // learned a second time as work after the loop (TorchStackShapes.KernelsAtTheElementwiseFloor...): training
  // 13.1% -> 7.6% (H100) and 12.6% -> 1.7% (H200), forward 19.3% -> 23.3% and 8.5% -> 12.8%. The forward is
  // short of host time (too fast), and the inflated per-expert kernels at larger tokens had made up part of
  // it.
  // With per-expert GEMMs faster than the table learned per launch (not as a rate), bf16 index_add_ at the
  // GPU's atomic-add rate and shapes matched on the tensors' dims (2026-11-28): learned loop 8.2% -> 7.1% on
  // H200 (forward 12.5% -> 10.0%) and 7.4% -> 6.9% on H100, transformers' eager H200 mean 10.3% -> 9.8%
  // (forward median 12.8% -> 12.2%), shipped grouped H200 8.0% -> 7.5%.
  EXPECT_LE(with_learned.at({"hf-eager", "h100"}).by_phase.at("train").median_abs(), 10.0);
  EXPECT_LE(with_learned.at({"hf-eager", "h200"}).by_phase.at("train").median_abs(), 10.0);
  for (const char* gpu : {"h100", "h200"})
    EXPECT_LE(with_learned.at({"hf-eager", gpu}).by_phase.at("forward").median_abs(), 25.0) << gpu;
  // The shipped eager profile counts those whole-weight kernels from the weights' shapes (no trace): its
  // training medians are 5.6%/10.6% (loop, H100/H200) and 9.2%/15.6% (transformers' eager), from 29-63%
  // before.
  for (const char* style : {"loop", "hf-eager"})
    for (const char* gpu : {"h100", "h200"})
      EXPECT_LE(with_shipped.at({style, gpu}).by_phase.at("train").median_abs(), 25.0) << style << " " << gpu;
  EXPECT_LE(learned("grouped", "h100").mean_speedup(), h100_spread);
  EXPECT_LE(learned("loop", "h100").mean_speedup(), h100_spread);
  // H200 (one device call, so no measured spread of its FarSkip speedup to bound it by): the H100 bounds.
  EXPECT_LE(learned("grouped", "h200").median_abs(), 10.0);
  EXPECT_LE(learned("loop", "h200").median_abs(), 10.0);
  // Cross-GPU transfer, over the records whose host probe says their host's speed (a profile carries its own
  // lease's host otherwise: H200-learned grouped on the unprobed H100 records 28.6% mean, lease x2-b's host
  // issuing slower than the 2026-11-26 H100 leases'): within 20% (mean) for the grouped-GEMM styles.
  // 2026-11-28: H100-learned on H200 grouped 14.1%, transformers' grouped_mm 14.2%; H200-learned on
  // H100 10.3% and 11.3%. Before, over every record: H100-learned on H200 grouped 11.0%, transformers'
  // grouped_mm 12.0%; H200-learned on H100 11.6% and 17.1%. (The shipped defaults: grouped 10.7%/11.0%,
  // transformers' grouped_mm 11.1%/10.2%; the loop styles transfer at 19.3% and 11.8% against the
  // shipped 15.0% and 12.4%.) Before learned profiles ran the base's form of the EP path's ops at EP 1,
  // H100-learned grouped on H200 was 20.2%.
  for (const char* gpu : {"h100", "h200"}) {
    print(std::string(gpu) + "-learned", errors(learned_on(gpu)));
    const Buckets transferred = errors(learned_on(gpu), false, true);
    print(std::string(gpu) + "-learned, probed records", transferred);
    for (const auto& [key, b] : transferred) {
      if (key.first != "grouped" && key.first != "hf-grouped_mm") continue;
      SCOPED_TRACE(std::string(gpu) + "-learned " + key.first + " " + key.second);
      EXPECT_LE(b.all.mean_abs(), 20.0);
    }
  }
}

// A grouped GEMM that runs slower than the hardware profile at Qwen3's small experts (64 per rank at EP 2,
// 256 rows each) loses that time per launch, not per FLOP: at Mixtral's 4 experts of 4,096 rows the same
// torch._grouped_mm runs at the profile's rate (routed experts' GPU time -0.3% forward and +3.4% backward
// with the shipped profile, 2026-11-28 H200 x2-b trace). Learned as one rate (0.86 forward, 0.75 backward),
// the shortfall had slowed Mixtral's routed experts by 5.4% forward and 19.5% backward.
TEST(TorchStackShapes, AGroupedGemmShortfallLearnedAtSmallExpertsLeavesLargeOnesAtTheirRate) {
  const std::string dir = kData + "/2026-11-28-nvidia-h200-x2-b/ep2/";
  const auto learned = calibrate::learn_implementation(
      {calibrate::load_traced_stack(
          dir + "qwen3-30b-a3b.grouped.ep2.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz", {})},
      hw::load_profile("h200"), "small-experts");
  const std::string file = testing::TempDir() + "/small-experts.json";
  std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
  TorchStackOptions options;
  options.impl.all = file;
  options.ops = true;
  const auto compared = compare_torch_stacks(
      find_torch_stack_records({dir + "mixtral-8x7b.grouped.ep2.t8192.s4096.l2.train.regular.balanced.json"}),
      options);
  ASSERT_EQ(compared.size(), 1u);
  int checked = 0;
  for (const OpTimes& op : compared.front().ops) {
    if (op.op != "routed_experts") continue;
    ++checked;
    EXPECT_NEAR(op.predicted_gpu_ms / op.measured_gpu_ms, 1.0, 0.04)
        << (op.backward ? "backward " : "forward ") << op.predicted_gpu_ms << " ms predicted, "
        << op.measured_gpu_ms << " traced";
  }
  EXPECT_EQ(checked, 2);
}

// transformers' eager experts learned from one Qwen3 training trace of the H200 x2-c lease, against the
// H200 profile: the profile the TorchStackShapes tests carry to Mixtral.
calibrate::LearnedImplementation qwen3_eager_learned_on_h200() {
  return calibrate::learn_implementation(
      {calibrate::load_traced_stack(
          kData + "/2026-11-28-nvidia-h200-x2-c/hf/"
                  "qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz",
          {})},
      hw::load_profile("h200"), "qwen3-eager");
}

// Mixtral's eager-experts records of one H200 lease (T 2,048 and 8,192) simulated with `profile`, written to
// a file named `name` as a user's would be, per op; each record's host at its probe when `host_from_probe`.
std::vector<TorchStackComparison> mixtral_eager_with(const cost::ImplementationProfile& profile,
                                                     const std::string& name, bool host_from_probe) {
  const std::string file = testing::TempDir() + "/" + name + ".json";
  std::ofstream(file) << cost::implementation_to_json(profile).dump(1);
  TorchStackOptions options;
  options.impl.all = file;
  options.ops = true;
  options.host_from_probe = host_from_probe;
  return compare_torch_stacks(
      find_torch_stack_records({kData + "/2026-11-28-nvidia-h200-x1-mixtral-eager/hf"}), options);
}

// PyTorch's elementwise kernels take a flat 2-6 us at a few hundred rows on an H200
// (data/calibration/2026-11-28-nvidia-h200-elementwise-floor): Qwen3's 128-row silu_backward in transformers'
// eager loop takes about 4 us, which read as traffic is 77 bytes per element. Learned as its floor and its
// operands' bytes (grad and input in bf16, a bf16 result: 6 per element), Mixtral's 2,048-row experts no
// longer pay 13x that. And autograd's backward of the loop starts with two odd iterations (the first assigns
// the stacked weights' gradients, the second adds out of place): the loop found after them ends inside the
// last expert's iteration, whose remaining launches had been learned as work after the loop (an extra
// expert's GEMMs, fills and accumulations: 1/128 of Qwen3's loop, 1/8 of Mixtral's). Mixtral's eager training
// predicted from the Qwen3-learned profile, step error at T 2,048/8,192: +13.1%/+29.9% with neither,
// +6.9%/+17.2% with the floors, -0.9%/+1.2% with both; routed experts' GPU time forward -9.2%/-10.9%,
// backward +2.4%/+5.3%
// (+20.0%/+39.3% backward with neither).
TEST(TorchStackShapes, KernelsAtTheElementwiseFloorScaleWithTheirOperands) {
  const auto learned = qwen3_eager_learned_on_h200();
  const double kernel_min_ns = hw::load_profile("h200").gpu.kernel_min_s * 1e9;
  const cost::ImplOpEntry* backward = learned.profile.find(
      models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::BACKWARD, models::AttentionType::GQA);
  ASSERT_NE(backward, nullptr);
  int silu_backward = 0;
  for (const cost::ImplStep& s : backward->steps) {
    if (s.label != "aten::silu_backward" || s.repeat != cost::ImplRepeat::PER_EXPERT) continue;
    ++silu_backward;
    EXPECT_DOUBLE_EQ(s.bytes_per_element, 6);
    EXPECT_GT(s.floor_ns, kernel_min_ns);
    EXPECT_LE(s.floor_ns, 4 * kernel_min_ns);
  }
  EXPECT_EQ(silu_backward, 1);
  for (const cost::ImplStep& s : backward->steps)
    EXPECT_FALSE(s.kind == cost::ImplStepKind::GEMM && s.repeat == cost::ImplRepeat::ONCE) << s.label;
  const auto compared = mixtral_eager_with(learned.profile, "qwen3-eager", true);
  ASSERT_EQ(compared.size(), 2u);  // T 2,048 and 8,192
  int checked = 0;
  for (const TorchStackComparison& c : compared) {
    EXPECT_LE(std::abs(c.error_pct()), 5.0) << c.record.name;
    for (const OpTimes& op : c.ops) {
      if (op.op != "routed_experts") continue;
      ++checked;
      EXPECT_NEAR(op.predicted_gpu_ms / op.measured_gpu_ms, 1.0, 0.15)
          << c.record.name << (op.backward ? " backward " : " forward ") << op.predicted_gpu_ms
          << " ms predicted, " << op.measured_gpu_ms << " traced";
    }
  }
  EXPECT_EQ(checked, 4);
}

// A bf16 index_add_ adds each source element atomically: the calibrated H200 profile's atomic-add rate (from
// data/calibration/2026-11-27-nvidia-h200-index-add-sdpa) sets its time, not its bytes. Qwen3's per-expert
// index_add_ (128 rows x 2,048 into 2,048 x 2,048) is learned as one add per element of the expert's rows x
// hidden and 6 bytes each (the source and the rows it adds into read, those rows written; the int64 index
// 8 / 2,048 more), not as the whole output it was handed. Mixtral's 2,048-row one at T 8,192 is then
// 2,048 x 4,096 adds at about 125 G/s, 67 us, where the trace has 65 (per expert, per layer); read as traffic
// at the traced size it had been 16 us, and with it the routed experts' forward GPU time -10.9%. With the
// per-expert GEMMs' deficit learned per launch too (not as a rate), that forward is within 5% at both token
// counts (-1.3% and -2.6% measured when this was written).
TEST(TorchStackShapes, AnIndexAddLearnedAtSmallExpertsRunsAtTheAtomicRateAtLargeOnes) {
  const hw::HwProfile h200 = hw::load_profile("h200");
  ASSERT_GT(h200.gpu.atomic_add_bf16_per_s, 100e9);
  ASSERT_LT(h200.gpu.atomic_add_bf16_per_s, 150e9);
  const auto learned = qwen3_eager_learned_on_h200();
  const cost::ImplOpEntry* forward = learned.profile.find(
      models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, models::AttentionType::GQA);
  ASSERT_NE(forward, nullptr);
  int index_add = 0;
  for (const cost::ImplStep& s : forward->steps) {
    if (s.label != "aten::index_add_") continue;
    ++index_add;
    EXPECT_EQ(s.repeat, cost::ImplRepeat::PER_EXPERT);
    EXPECT_EQ(s.rows, cost::ImplRows::EXPERT_ROWS);
    EXPECT_EQ(s.width, cost::ImplWidth::HIDDEN);
    EXPECT_DOUBLE_EQ(s.atomic_adds_per_element, 1);
    EXPECT_NEAR(s.bytes_per_element, 6 + 8.0 / 2048, 1e-9);
  }
  EXPECT_EQ(index_add, 1);
  const auto compared = mixtral_eager_with(learned.profile, "qwen3-eager-atomic", false);
  ASSERT_EQ(compared.size(), 2u);
  int checked = 0;
  for (const TorchStackComparison& c : compared)
    for (const OpTimes& op : c.ops) {
      if (op.op != "routed_experts" || op.backward) continue;
      ++checked;
      EXPECT_NEAR(op.predicted_gpu_ms / op.measured_gpu_ms, 1.0, 0.05)
          << c.record.name << ": " << op.predicted_gpu_ms << " ms predicted, " << op.measured_gpu_ms
          << " traced";
    }
  EXPECT_EQ(checked, 2);
}

// One PyTorch kernel streams at one rate from 8 to 270 MB: Qwen3's and Mixtral's RMSNorm pieces in the H200
// traces (the fp32 multiply 2.77, 2.52 and 2.66 TB/s at 34, 67 and 268 MB), while the calibrated memory curve
// rises 0.64 -> 0.81 of HBM over that range because slow RMSNorm kernels fill its small-size bins. Each step
// timed by its traffic keeps the rate of its traced size above it (cost/IMPL_FORMAT.md `steady_from_MB`).
// Inside the loop over experts, a [768, 2,048] or [1,536, 2,048] copy is one expert's weight-gradient slice
// (hidden x expert_ffn), not tokens x expert_ffn (tokens = hidden = 2,048 in the trace): Mixtral's is
// 4,096 x 14,336 at any token count. Mixtral from the Qwen3-learned profile (2026-11-29): RMSNorms' forward
// GPU time at T 8,192 -26%/-30%/-30% (attention, MLP, final) -> -15%/-19%/-19%; routed experts' backward
// +2.4%/+5.0% -> +7.8%/+5.0% at T 2,048/8,192 (its weight copies had been half and twice their size).
TEST(TorchStackShapes, LearnedKernelsKeepTheirTracedRateAtLargerSizes) {
  const auto learned = qwen3_eager_learned_on_h200();
  int weight_copies = 0, by_traffic = 0, reductions = 0;
  for (const cost::ImplOpEntry& entry : learned.profile.ops)
    for (const cost::ImplStep& s : entry.steps) {
      if (s.kind != cost::ImplStepKind::MEMORY) continue;
      // The traced kernels (the shipped profile's permute and unpermute complete the profile for EP > 1).
      const bool traced = s.label.starts_with("aten::");
      if (traced && s.floor_ns == 0 && s.max_bytes_per_s == 0 && s.atomic_adds_per_element == 0) {
        ++by_traffic;
        // A reduction's rate keeps rising with its size (torch's mean 0.8 TB/s at 17 MB, 3.5 at 269 MB on one
        // H200, data/calibration/2026-11-29-nvidia-h200-l2-rates): the memory curve times it.
        const bool reduction = s.label == "aten::sum" || s.label == "aten::mean";
        reductions += reduction;
        EXPECT_EQ(s.steady_bytes > 0, !reduction) << models::to_string(entry.op) << " " << s.label;
      }
      if (entry.op == models::LayerOp::ROUTED_EXPERTS && entry.pass == cost::ImplPass::BACKWARD &&
          s.label == "aten::copy_" && s.repeat == cost::ImplRepeat::PER_EXPERT) {
        ++weight_copies;
        EXPECT_EQ(s.rows, cost::ImplRows::NONE);
        EXPECT_EQ(s.width, cost::ImplWidth::EXPERT_WEIGHT);
      }
    }
  EXPECT_GT(by_traffic, 20);
  EXPECT_GT(reductions, 0);
  EXPECT_EQ(weight_copies, 2);  // gate_up's and down's slices
  const auto compared = mixtral_eager_with(learned.profile, "qwen3-eager-steady", true);
  ASSERT_EQ(compared.size(), 2u);
  int norms = 0;
  for (const TorchStackComparison& c : compared) {
    for (const OpTimes& op : c.ops) {
      const double ratio = op.predicted_gpu_ms / op.measured_gpu_ms;
      if (op.op == "routed_experts" && op.backward) {
        EXPECT_NEAR(ratio, 1.0, 0.10) << c.record.name;
      }
      if (c.record.tokens != 8192 || op.backward || op.op.find("norm") == std::string::npos) continue;
      ++norms;
      EXPECT_NEAR(ratio, 1.0, 0.20) << c.record.name << " " << op.op;
    }
  }
  EXPECT_EQ(norms, 3);
}

// Two models with no file among moesim's specs and no trace any profile learned from: transformers'
// OLMoE-1B-7B (64 experts top-8, FFN 1,024, q/k norms over the whole projection) and Qwen1.5-MoE-A2.7B (60
// experts top-4, a 5,632-wide shared expert behind a sigmoid gate, q/k/v biases), each in all four styles, 2
// layers, EP 1, 2,048 and 8,192 tokens, forward and training, on one H200
// (data/torch-stacks/2026-11-29-nvidia-h200-x1- newmodels), simulated from the model files a user would write
// (beside the records) with the profiles learned from Qwen3's traces and with the shipped ones. Measured:
// learned mean |step error| 5.0%, shipped 13.0% (2026-11-29, with Qwen1.5's shared-expert gate; per model and
// style in the test's output).
TEST_F(TorchStackGeneralization, ModelsNoProfileLearnedFromAndNoSpecShipped) {
  std::vector<traces::TorchStackRecord> unseen;
  for (const auto& r : *records_)
    if (r.file.find("/2026-11-29-nvidia-h200-x1-newmodels/") != std::string::npos) unseen.push_back(r);
  ASSERT_EQ(unseen.size(), 32u);                   // 2 models x 4 styles x 2 token counts x 2 phases
  std::map<std::string, Errors> learned, shipped;  // "all" and per model
  for (bool with_learned : {true, false}) {
    TorchStackOptions options;
    if (with_learned) options.impl = learned_per_gpu();
    options.host_from_probe = true;
    for (const TorchStackComparison& c : compare_torch_stacks(unseen, options)) {
      EXPECT_FALSE(c.record.model_spec.empty()) << c.record.name;  // read from the file beside the records
      auto& by = with_learned ? learned : shipped;
      by["all"].time_pct.push_back(c.error_pct());
      by[c.record.model + " " + c.record.style].time_pct.push_back(c.error_pct());
    }
  }
  for (const auto& [what, e] : learned)
    std::cout << fmt::format(
        "unseen model {:<32} {:>2} records: |step error| mean {:5.1f}% learned, {:5.1f}% shipped\n", what,
        e.time_pct.size(), e.mean_abs(), shipped.at(what).mean_abs());
  EXPECT_LE(learned.at("all").mean_abs(), 8.0);
  EXPECT_GE(learned.at("all").within(10), 24);
  EXPECT_LT(learned.at("all").mean_abs(), shipped.at("all").mean_abs());
}

}  // namespace
}  // namespace moesim::validate
