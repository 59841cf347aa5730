// A user's own trace, as torch.profiler takes it (`profile(with_stack=True)`, no moesim ranges): the learner
// reads the ops from the module calls the Python tracer records (traces/ModuleRanges.hpp). transformers'
// OLMoE and Qwen1.5-MoE, 2 layers, 2,048 tokens, a training step, traced that way and with moesim's ranges in
// separate processes of one H200 lease (data/torch-stacks/2026-11-29-nvidia-h200-x1-plain, run
// --plain-trace): the profile learned from the plain trace predicts every other H200 record of its experts
// implementation (other models, token counts, phases) about as the one learned from the annotated trace does.
// The reference for "about": the same configuration's annotated trace from another lease (2026-11-29
// newmodels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/validate/Measured.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kData = std::string(MOESIM_TEST_DATA_DIR) + "/data/torch-stacks";
// The traced configuration of `model` in `style`.
std::string traced(const std::string& model, const std::string& style) {
  return model + "." + style + ".ep1.t2048.s2048.l2.train.regular.balanced";
}

std::string learned_file(const std::string& trace, const std::string& name) {
  const auto learned = calibrate::learn_implementation({calibrate::load_traced_stack(trace, {})},
                                                       hw::load_profile("h200"), name);
  const std::string file = testing::TempDir() + "/" + name + ".json";
  std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
  return file;
}

struct Mean {
  double sum = 0;
  int n = 0, within10 = 0;
  void add(double pct) {
    sum += std::abs(pct);
    ++n;
    within10 += std::abs(pct) <= 10;
  }
  double mean() const { return n ? sum / n : 0; }
};

TEST(PlainTraces, AProfileLearnedFromAUsersTracePredictsAsOneFromAnnotatedRanges) {
  const std::string folder = kData + "/2026-11-29-nvidia-h200-x1-plain/";
  int pairs = 0;
  std::map<std::string, double> plain_gaps;  // |plain - annotated| per configuration
  double lease_spread = 0;                   // the most |annotated - other lease| over the configurations
  for (const auto& [model, style] :
       {std::pair{"olmoe-1b-7b", "hf-eager"}, std::pair{"olmoe-1b-7b", "hf-grouped_mm"},
        std::pair{"qwen1.5-moe-a2.7b", "hf-grouped_mm"}}) {
    const std::string config = traced(model, style);
    std::vector<traces::TorchStackRecord> records;
    for (const auto& r : find_torch_stack_records({kData}))
      if (r.status == "ok" && r.scale == 1 && profile_for_device(r.device) == "h200" && r.style == style &&
          r.name != config)
        records.push_back(r);
    std::map<std::string, Mean> by;  // plain, annotated, other lease
    for (const std::string how : {"plain", "annotated", "other lease"}) {
      TorchStackOptions options;
      options.host_from_probe = true;
      const std::string trace = how == "other lease"
                                    ? kData + "/2026-11-29-nvidia-h200-x1-newmodels/ep1/" + config
                                    : folder + how + "/" + config;
      options.impl.by_style[style] = learned_file(trace + ".rank0.trace.json.gz", how + "-" + config);
      for (const TorchStackComparison& c : compare_torch_stacks(records, options)) by[how].add(c.error_pct());
    }
    const Mean &plain = by["plain"], &annotated = by["annotated"], &other = by["other lease"];
    std::cout << fmt::format(
        "learned from {:<48} {:>3} H200 records: |step error| mean {:5.1f}% ({} within 10%) from the plain "
        "trace, "
        "{:5.1f}% ({}) from the annotated one, {:5.1f}% ({}) from the other lease's annotated one\n",
        config, plain.n, plain.mean(), plain.within10, annotated.mean(), annotated.within10, other.mean(),
        other.within10);
    EXPECT_GE(plain.n, 40) << config;
    plain_gaps[config] = std::abs(plain.mean() - annotated.mean());
    lease_spread = std::max(lease_spread, std::abs(annotated.mean() - other.mean()));
    ++pairs;
  }
  EXPECT_EQ(pairs, 3);
  // As near the annotated trace's profile as two annotated traces of a configuration, taken on two leases,
  // are to each other (the most over the three configurations, 1.2 points here), or a point and a half: the
  // Python tracer's host overhead is not uniform over ops, which the untraced issue times correct only on the
  // whole (plain - annotated: 0.9, 1.2 and -0.5 points here).
  for (const auto& [config, gap] : plain_gaps) EXPECT_LE(gap, std::max(1.5, lease_spread)) << config;
}

}  // namespace
}  // namespace moesim::validate
