// Models nobody wrote for moesim (transformers' OLMoE and Qwen1.5-MoE, random weights), given moesim's
// profiler ranges by kernels/torch_stacks/annotate.py from their parts' names and traced for one training
// step on an H100 (data/calibration/2026-11-28-nvidia-h100-transformers-own-records, lease-a): every kernel
// must find its op in both passes, the record beside each trace must give the run (the user's own model spec
// included), and the learner must tell the two experts implementations apart.
#include <gtest/gtest.h>

#include <algorithm>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/traces/TorchStackRecord.hpp"

namespace moesim::calibrate {
namespace {

const std::string kData =
    std::string(MOESIM_TEST_DATA_DIR) + "/data/calibration/2026-11-28-nvidia-h100-transformers-own-records";
const std::string kDir = kData + "/lease-a";

struct Traced {
  std::string model, implementation, record;
  std::string trace() const { return record + ".rank0.trace.json.gz"; }
};

Traced traced(const std::string& model, const std::string& implementation) {
  const std::string style = implementation == "eager" ? "hf-eager" : "hf-grouped_mm";
  return {model, implementation,
          kDir + "/" + model + "-" + implementation + "/" + model + "." + style +
              ".ep1.t2048.s2048.l1.train.regular.natural"};
}

void expect_every_kernel_attributed(const TracedStack& s) {
  EXPECT_TRUE(s.step.unattributed.empty()) << s.step.unattributed.front().name;
  EXPECT_EQ(s.step.unattributed_syncs, 0);
  EXPECT_EQ(s.step.layers, 1);
  EXPECT_TRUE(s.step.has_backward);
  for (const char* op :
       {"attn_norm", "attn_qkv", "attn_core", "attn_out", "mlp_norm", "gate", "routed_experts"})
    for (bool backward : {false, true})
      EXPECT_NE(s.step.find(0, op, backward), nullptr) << op << (backward ? " bwd" : "");
}

void expect_learned(const Traced& t, const std::string& base) {
  const TracedStack s = load_traced_stack(t.trace(), {});  // everything else from the record beside it
  const traces::TorchStackRecord record = traces::read_torch_stack_record(t.record + ".json");
  EXPECT_EQ(s.model.name, t.model);  // the spec the record names, not a shipped one
  EXPECT_EQ(s.tokens, 2048);
  EXPECT_EQ(s.issue_ms, record.issue_ms_p50);
  expect_every_kernel_attributed(s);
  const auto learned = learn_implementation({s}, hw::load_profile("h100"), t.model + "-" + t.implementation);
  ASSERT_NE(learned.profile.base, nullptr);
  EXPECT_EQ(learned.profile.base->name, base);
  EXPECT_EQ(learned.profile.host_probe_us, record.host_probe_us_rank0);
}

TEST(AnnotatedTrace, TransformersGroupedMmExpertsAreLearnedAsGrouped) {
  expect_learned(traced("olmoe-1b-7b", "grouped_mm"), "grouped");
  expect_learned(traced("qwen1.5-moe-a2.7b", "grouped_mm"), "grouped");
}

TEST(AnnotatedTrace, TransformersEagerExpertsAreLearnedAsALoop) {
  expect_learned(traced("olmoe-1b-7b", "eager"), "eager");
  expect_learned(traced("qwen1.5-moe-a2.7b", "eager"), "eager");
}

bool notes_a_late_first_launch(const std::string& trace, const std::string& base) {
  const auto learned = learn_implementation({load_traced_stack(trace, {})}, hw::load_profile(base), "t");
  return std::any_of(learned.notes.begin(), learned.notes.end(),
                     [](const std::string& n) { return n.find("first launch came") != std::string::npos; });
}

// These traces profiled their step alone: the profiler's start held the first launch 2.1-3.3 ms. The learner
// says so; it does not for the torch_stacks runs, which profile a warm-up step first (first launch 0.1-0.6
// ms), nor for profile_step's traces since it does too (H200 lease F: 0.21-0.25 ms).
TEST(AnnotatedTrace, AProfilerStartedForTheTracedStepIsNamed) {
  const Traced t = traced("olmoe-1b-7b", "grouped_mm");
  EXPECT_GT(load_traced_stack(t.trace(), {}).step.first_launch_us, 2000);
  EXPECT_TRUE(notes_a_late_first_launch(t.trace(), "h100"));
  const std::string warmed =
      std::string(MOESIM_TEST_DATA_DIR) +
      "/data/calibration/2026-11-28-nvidia-h200-transformers-own-records/lease-f/"
      "olmoe-1b-7b-grouped_mm/olmoe-1b-7b.hf-grouped_mm.ep1.t2048.s2048.l1.train.regular."
      "natural.rank0.trace.json.gz";
  EXPECT_LT(load_traced_stack(warmed, {}).step.first_launch_us, 1000);
  EXPECT_FALSE(notes_a_late_first_launch(warmed, "h200"));
  EXPECT_FALSE(notes_a_late_first_launch(
      std::string(MOESIM_TEST_DATA_DIR) +
          "/data/torch-stacks/2026-11-27-nvidia-h100-x1-hfgmm/hf/"
          "qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz",
      "h100"));
}

TEST(AnnotatedTrace, ADenseLayersMlpIsLearnedFromTheTrace) {
  // DeepSeek-V2-Lite's first layer is dense (first_k_dense_replace 1), the second an MoE layer.
  const std::string record = kData +
                             "/lease-c/deepseek-v2-lite-grouped_mm/"
                             "deepseek-v2-lite.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.natural";
  const TracedStack s = load_traced_stack(record + ".rank0.trace.json.gz", {});
  EXPECT_EQ(s.model.dense_layers, 1);
  EXPECT_EQ(s.step.layers, 2);
  for (bool backward : {false, true}) {
    EXPECT_NE(s.step.find(0, "dense_ffn", backward), nullptr);
    EXPECT_EQ(s.step.find(0, "routed_experts", backward), nullptr);
    EXPECT_NE(s.step.find(1, "routed_experts", backward), nullptr);
    EXPECT_EQ(s.step.find(1, "dense_ffn", backward), nullptr);
  }
  const auto learned = learn_implementation({s}, hw::load_profile("h100"), "deepseek-v2-lite");
  for (cost::ImplPass pass : {cost::ImplPass::FORWARD, cost::ImplPass::BACKWARD}) {
    const auto entry =
        std::find_if(learned.profile.ops.begin(), learned.profile.ops.end(),
                     [&](const auto& e) { return e.op == models::LayerOp::DENSE_FFN && e.pass == pass; });
    ASSERT_NE(entry, learned.profile.ops.end());
    // SwiGLU's three GEMMs forward, each with its dgrad and wgrad backward, at least
    EXPECT_GE(entry->steps.size(), pass == cost::ImplPass::FORWARD ? 3u : 6u);
  }
}

}  // namespace
}  // namespace moesim::calibrate
