// Issue 32's generalization test: an implementation profile learned from ONE committed trace per (style, GPU)
// predicts every other committed record of that style (other models, token counts, layer counts, EP 1/2/4,
// regular and FarSkip, forward and training), beside the shipped profile of the style (no trace).
//
// The records are data/torch-stacks (kernels/torch_stacks on H100; no H200 data exists). What the test
// asserts is what the measurement shows to hold (the report prints the errors): the learned profiles'
// step-time errors are bounded per style, they beat the shipped defaults, and the FarSkip speedup is
// predicted within the spread the same configuration shows between device calls, which the data folders
// measure (the x4 and x2 machines ran the same EP 2 and EP 1 configurations).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kData = std::string(MOESIM_TEST_DATA_DIR) + "/data/torch-stacks";
const std::string kCall2 = kData + "/2026-11-26-nvidia-h100-x4";

/** The one trace each style learns from: Qwen3-30B-A3B, 2048 tokens per rank, 2 layers, H100. */
const std::map<std::string, std::string>& training_traces() {
  static const std::map<std::string, std::string> traces = {
      {"grouped",
       kCall2 + "/ep4/qwen3-30b-a3b.grouped.ep4.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {"loop",
       kCall2 + "/ep4/qwen3-30b-a3b.loop.ep4.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {"hf-grouped_mm",
       kCall2 +
           "/hf/qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"},
      {"hf-eager",
       kCall2 + "/hf/qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.forward.regular.balanced.rank0.trace.json.gz"},
  };
  return traces;
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

class TorchStackGeneralization : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    records_ = new std::vector<traces::TorchStackRecord>();
    for (const auto& r : find_torch_stack_records({kData}))
      if (r.status == "ok" && r.scale == 1) records_->push_back(r);
    const hw::HwProfile h100 = hw::load_profile("h100");
    learned_ = new std::map<std::string, std::string>();
    for (const auto& [style, trace] : training_traces()) {
      const auto learned = calibrate::learn_implementation({calibrate::load_traced_stack(trace, {})}, h100,
                                                           "learned-" + style);
      const std::string file = testing::TempDir() + "/learned-" + style + ".json";
      std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
      (*learned_)[style] = file;
    }
  }
  static void TearDownTestSuite() {
    delete records_;
    delete learned_;
  }

  // Errors per style over the records not used for learning, with `choice`.
  static std::map<std::string, Errors> errors(const ImplementationChoice& choice) {
    TorchStackOptions options;
    options.impl = choice;
    std::map<std::string, Errors> out;
    for (const TorchStackComparison& c : compare_torch_stacks(*records_, options)) {
      if (training_traces().at(c.record.style).rfind(c.record.file.substr(0, c.record.file.size() - 5), 0) ==
          0)
        continue;  // the record the profile learned from
      Errors& e = out[c.record.style];
      e.time_pct.push_back(c.error_pct());
      if (c.measured_speedup && c.predicted_speedup)
        e.speedup.push_back(std::abs(*c.predicted_speedup - *c.measured_speedup));
    }
    return out;
  }

  static void print(const std::string& what, const std::map<std::string, Errors>& by_style) {
    for (const auto& [style, e] : by_style) {
      std::cout << fmt::format(
          "{:<9} {:<14} {:>3} records: |step error| median {:5.1f}% mean {:5.1f}%, within 10% {:>3}, within "
          "15% {:>3}; "
          "{:>2} FarSkip pairs: |speedup error| mean {:.3f}\n",
          what, style, e.time_pct.size(), e.median_abs(), e.mean_abs(), e.within(10), e.within(15),
          e.speedup.size(), e.mean_speedup());
    }
  }

  static std::vector<traces::TorchStackRecord>* records_;
  static std::map<std::string, std::string>* learned_;
};

std::vector<traces::TorchStackRecord>* TorchStackGeneralization::records_ = nullptr;
std::map<std::string, std::string>* TorchStackGeneralization::learned_ = nullptr;

// The spread of the measured FarSkip speedup between two device calls of the same configuration.
double measured_speedup_spread(const std::vector<traces::TorchStackRecord>& records) {
  std::map<std::string, std::map<std::string, std::pair<double, double>>>
      by_config;  // key -> folder -> reg, fs
  for (const auto& r : records) {
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
      "measured FarSkip speedup, same configuration on two device calls: {} pairs, |difference| mean "
      "{:.3f}\n",
      spreads.size(), spreads.empty() ? 0 : sum / static_cast<double>(spreads.size()));
  return spreads.empty() ? 0 : sum / static_cast<double>(spreads.size());
}

TEST_F(TorchStackGeneralization, LearnedFromOneTracePerStyle) {
  ImplementationChoice learned;
  learned.by_style = *learned_;
  const auto with_learned = errors(learned);
  const auto with_shipped = errors(ImplementationChoice{});
  print("learned", with_learned);
  print("shipped", with_shipped);
  const double spread = measured_speedup_spread(*records_);
  ASSERT_EQ(with_learned.size(), 4u);
  for (const auto& [style, e] : with_learned) {
    SCOPED_TRACE(style);
    // A learned profile predicts its style better than the shipped default does.
    EXPECT_LT(e.mean_abs(), with_shipped.at(style).mean_abs());
  }
  // Bounds the measurement above shows (see the commit message and the README's table).
  EXPECT_LE(with_learned.at("grouped").median_abs(), 10.0);
  EXPECT_LE(with_learned.at("loop").median_abs(), 20.0);
  EXPECT_LE(with_learned.at("grouped").mean_speedup(), spread);
  EXPECT_LE(with_learned.at("loop").mean_speedup(), spread);
}

}  // namespace
}  // namespace moesim::validate
