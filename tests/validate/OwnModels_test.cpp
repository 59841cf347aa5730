// Issue 32's check on models nobody fitted moesim to, run as a user runs their own: transformers' OLMoE and
// Qwen1.5-MoE (random weights, grouped_mm and eager experts) and DeepSeek-V2-Lite (grouped_mm, first layer
// dense), annotated by kernels/torch_stacks/annotate.py and timed by
// kernels/tools/trace_transformers_model.py on H100 leases A-C
// (data/calibration/2026-11-28-nvidia-h100-transformers-own-records) and H200 leases E-H
// (data/calibration/2026-11-28-nvidia-h200-transformers-own-records). A profile learned from a lease's one
// traced training step (T 2048, one layer; DeepSeek two) predicts the seven other configurations of that
// lease (2 and 4 layers, 2,048-8,192 tokens, forward and training) and all eight of the GPU's other lease,
// each record's host at the speed its host probe says (validate --host-probe). The shipped profiles and the
// learned one without the probe are printed beside it.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <tuple>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/common/Statistics.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kDir =
    std::string(MOESIM_TEST_DATA_DIR) + "/data/calibration/2026-11-28-nvidia-h100-transformers-own-records";
const std::string kDirH200 =
    std::string(MOESIM_TEST_DATA_DIR) + "/data/calibration/2026-11-28-nvidia-h200-transformers-own-records";

// The profile learned on hardware profile `hw` from one traced record (DIR/NAME.rank0.trace.json.gz, its
// record beside it), as a file.
std::string learned_file(const std::string& traced, const std::string& name, const std::string& dir = kDir,
                         const std::string& hw = "h100") {
  const auto learned = calibrate::learn_implementation(
      {calibrate::load_traced_stack(dir + "/" + traced + ".rank0.trace.json.gz", {})}, hw::load_profile(hw),
      name);
  const std::string file = testing::TempDir() + "/" + name + ".json";
  std::ofstream(file) << cost::implementation_to_json(learned.profile).dump(1);
  return file;
}

struct Summary {
  double median = 0, max = 0;
  std::size_t count = 0;
};

// |step error| over the records of `folder` but `left_out` (the traced one), simulated as `options` says.
Summary errors(const std::string& folder, const std::string& left_out, const TorchStackOptions& options) {
  std::vector<double> abs_errors;
  for (const TorchStackComparison& c : compare_torch_stacks(find_torch_stack_records({folder}), options))
    if (c.record.name != left_out) abs_errors.push_back(std::abs(c.error_pct()));
  Summary s;
  s.count = abs_errors.size();
  s.median = median(abs_errors);
  s.max = *std::max_element(abs_errors.begin(), abs_errors.end());
  return s;
}

struct Stack {
  std::string model, experts, traced, traced_lease;
  std::vector<std::string> leases;
  std::string dir = kDir, hw = "h100";
  bool probe_misleads = false;  ///< held to the bound without the host probe (see below)
};

TEST(OwnModels, ALearnedProfileWithTheHostProbePredictsOtherConfigurationsAndLeases) {
  const std::string one_layer = ".ep1.t2048.s2048.l1.train.regular.natural";
  std::vector<Stack> stacks;
  for (const std::string model : {"olmoe-1b-7b", "qwen1.5-moe-a2.7b"})
    for (const std::string experts : {"grouped_mm", "eager"}) {
      const std::string traced = model + (experts == "eager" ? ".hf-eager" : ".hf-grouped_mm") + one_layer;
      stacks.push_back({model, experts, traced, "lease-a", {"lease-a", "lease-b"}});
      stacks.push_back({model, experts, traced, "lease-e", {"lease-e", "lease-f"}, kDirH200, "h200"});
      stacks.push_back({model, experts, traced, "lease-f", {"lease-f", "lease-e"}, kDirH200, "h200"});
    }
  // a third H200 host, OLMoE grouped_mm only, its traced configuration profiled after the others were timed
  // (data/calibration/2026-11-28-nvidia-h200-profiler-aftermath: a profiled process slows, its probe more)
  stacks.push_back({"olmoe-1b-7b",
                    "grouped_mm",
                    "olmoe-1b-7b.hf-grouped_mm" + one_layer,
                    "lease-g",
                    {"lease-g"},
                    kDirH200,
                    "h200"});
  // its first layer dense: traced with it and one MoE layer
  const std::string dsv2 = "deepseek-v2-lite.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.natural";
  stacks.push_back({"deepseek-v2-lite", "grouped_mm", dsv2, "lease-c", {"lease-c"}, kDir, "h100", true});
  stacks.push_back({"deepseek-v2-lite", "grouped_mm", dsv2, "lease-e", {"lease-e"}, kDirH200, "h200", true});
  // a fourth H200 host, traced after the others were timed: its probe carries the learned profile (3.7%)
  stacks.push_back({"deepseek-v2-lite", "grouped_mm", dsv2, "lease-h", {"lease-h"}, kDirH200, "h200"});
  std::vector<double> medians;
  for (const Stack& st : stacks) {
    const std::string stack = st.model + "-" + st.experts;
    const std::string file =
        learned_file(st.traced_lease + "/" + stack + "/" + st.traced, stack + "-" + st.hw, st.dir, st.hw);
    for (const std::string& lease : st.leases) {
      const std::string folder = st.dir + "/" + lease + "/" + stack;
      TorchStackOptions shipped, learned_only, probed;
      learned_only.impl.all = probed.impl.all = file;
      probed.host_from_probe = true;
      const bool traced_here = lease == st.traced_lease;
      const std::string left_out = traced_here ? st.traced : "";  // another lease's run of it counts
      const Summary s = errors(folder, left_out, shipped), l = errors(folder, left_out, learned_only),
                    p = errors(folder, left_out, probed);
      std::cout << fmt::format(
          "{:<28} {} {} -> {}: {} records, |step error| median (max): shipped {:5.1f}% ({:5.1f}%), learned "
          "{:5.1f}% ({:5.1f}%), learned with the host probe {:5.1f}% ({:5.1f}%)\n",
          stack, st.hw, st.traced_lease, lease, p.count, s.median, s.max, l.median, l.max, p.median, p.max);
      EXPECT_GE(p.count, 6u);
      // DeepSeek-V2-Lite's probe misleads on leases C and E (17.7% and 25.5% with it, 7.2% and 11.1%
      // without): its traced step's probe read 10.3 and 10.8 us, below every other record's of its lease
      // (12.9-19.9, 11.4-20.7), whose steps did not slow by as much. Those records were timed after the
      // process had profiled the traced step, which slows a process and its probe more (the aftermath data
      // above). Re-run on lease H with the trace last, the traced probe (10.6 us) sits among the others'
      // (9.7-15.8) and the probe helps: 3.7% with it, 6.7% without. Leases C and E are held to the bound
      // without the probe, their probe figures still count in the median below.
      EXPECT_LE(st.probe_misleads ? l.median : p.median, 20.0) << stack << " " << st.hw << " " << lease;
      medians.push_back(p.median);
    }
  }
  // The 10% for a typical stack; the host-bound stacks' 15% (measured against the machines' range)
  // bounds the worst row here at 20%: one lease's host is one draw of that range.
  std::cout << fmt::format("median over the {} rows, with the host probe: {:.1f}%\n", medians.size(),
                           median(medians));
  EXPECT_LE(median(medians), 10.0);
}

// A profile learned from a trace gives back that trace's GPU time, op by op, at the traced configuration: the
// grouped_mm traces of one layer (host-bound) and OLMoE's at 8,192 tokens and two layers (lease D, GPU-bound:
// 10.4 ms of issue in a 15.4 ms step). Kernels that move less than their op's shapes (cuBLAS's 4-byte memsets
// before a GEMM, CUTLASS's grouped-GEMM setup) must keep their traced time at any token count.
TEST(OwnModels, ALearnedProfileGivesBackEachOpsTracedGpuTime) {
  const std::vector<std::string> traced = {
      "lease-a/olmoe-1b-7b-grouped_mm/olmoe-1b-7b.hf-grouped_mm.ep1.t2048.s2048.l1.train.regular.natural",
      "lease-a/qwen1.5-moe-a2.7b-grouped_mm/"
      "qwen1.5-moe-a2.7b.hf-grouped_mm.ep1.t2048.s2048.l1.train.regular.natural",
      "lease-d/olmoe-1b-7b-grouped_mm/olmoe-1b-7b.hf-grouped_mm.ep1.t8192.s2048.l2.forward.regular.natural"};
  for (const std::string& name : traced) {
    const std::string file = learned_file(name, "learned-ops");
    TorchStackOptions options;
    options.impl.all = file;
    options.ops = true;
    const auto compared =
        compare_torch_stacks(find_torch_stack_records({kDir + "/" + name + ".json"}), options);
    ASSERT_EQ(compared.size(), 1u);
    int checked = 0;
    for (const OpTimes& op : compared.front().ops) {
      if (op.measured_gpu_ms < 0.1) continue;  // a few launches: their floor, not their rate
      ++checked;
      EXPECT_NEAR(op.predicted_gpu_ms / op.measured_gpu_ms, 1.0, 0.03)
          << name << ": " << op.op << (op.backward ? " backward" : "") << " GPU " << op.predicted_gpu_ms
          << " ms predicted, " << op.measured_gpu_ms << " traced";
    }
    EXPECT_GE(checked, 7) << name;
  }
}

// A profile learned from a traced step gives that step back: its host issues the step in the untraced step's
// time (the loss, autograd's engine starting and finishing and the step's return, outside every op's
// launches, are host time too). Each traced one-layer training step of both GPUs' leases, predicted against
// its own p50.
TEST(OwnModels, ALearnedProfileGivesBackItsTracedStep) {
  for (const auto& [dir, lease, hw] :
       {std::tuple{kDir, "lease-a", "h100"}, {kDirH200, "lease-e", "h200"}, {kDirH200, "lease-f", "h200"}})
    for (const std::string model : {"olmoe-1b-7b", "qwen1.5-moe-a2.7b"})
      for (const std::string experts : {"grouped_mm", "eager"}) {
        const std::string name = std::string(lease) + "/" + model + "-" + experts + "/" + model +
                                 (experts == "eager" ? ".hf-eager" : ".hf-grouped_mm") +
                                 ".ep1.t2048.s2048.l1.train.regular.natural";
        TorchStackOptions options;
        options.impl.all = learned_file(name, "learned-step", dir, hw);
        const auto compared =
            compare_torch_stacks(find_torch_stack_records({dir + "/" + name + ".json"}), options);
        ASSERT_EQ(compared.size(), 1u);
        // 6%: OLMoE's eager steps on lease-e/f are -5.3%/-5.5% (-4.5% and under 5% when the learner took the
        // end of the backward loop's last expert for work after the loop, an expert's GEMMs and fills too
        // many: 2,390 launches predicted, 2,368 now, 2,364 traced; GPU +2.8% -> +1.3%, host -0.5%). What is
        // short is outside the ops.
        EXPECT_LE(std::abs(compared.front().error_pct()), 6.0) << name;
      }
}

}  // namespace
}  // namespace moesim::validate
