// A model nobody wrote for moesim (transformers' OLMoE, random weights), given moesim's profiler ranges by
// kernels/torch_stacks/annotate.py from its parts' names and traced for one training step on an H100
// (data/calibration/2026-11-27-nvidia-h100-olmoe-annotate): every kernel must find its op, in both passes
// and every layer, and the learner must tell the two experts implementations apart.
#include <gtest/gtest.h>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::calibrate {
namespace {

const std::string kDir =
    std::string(MOESIM_TEST_DATA_DIR) + "/data/calibration/2026-11-27-nvidia-h100-olmoe-annotate";

// The flags each run.json gives (traced.calibrate_flags, traced.host_probe_us).
TracedStack traced(const std::string& implementation, double issue_ms, double forward_ms, double probe_us) {
  return load_traced_stack(kDir + "/" + implementation + "/trace.json.gz",
                           {kDir + "/olmoe-1b-7b.json", 1, 2048, 2048, issue_ms, forward_ms, probe_us});
}

void expect_every_kernel_attributed(const TracedStack& s) {
  EXPECT_TRUE(s.step.unattributed.empty()) << s.step.unattributed.front().name;
  EXPECT_EQ(s.step.unattributed_syncs, 0);
  EXPECT_EQ(s.step.layers, 2);
  EXPECT_TRUE(s.step.has_backward);
  for (int layer : {0, 1})
    for (const char* op :
         {"attn_norm", "attn_qkv", "attn_core", "attn_out", "mlp_norm", "gate", "routed_experts"})
      for (bool backward : {false, true})
        EXPECT_NE(s.step.find(layer, op, backward), nullptr)
            << "L" << layer << " " << op << (backward ? " bwd" : "");
}

TEST(AnnotatedTrace, TransformersGroupedMmExpertsAreLearnedAsGrouped) {
  const TracedStack s = traced("grouped_mm", 18.313, 9.183, 8.77);
  expect_every_kernel_attributed(s);
  const auto learned = learn_implementation({s}, hw::load_profile("h100"), "olmoe-grouped_mm");
  ASSERT_NE(learned.profile.base, nullptr);
  EXPECT_EQ(learned.profile.base->name, "grouped");
  EXPECT_EQ(learned.profile.host_probe_us, 8.77);
}

TEST(AnnotatedTrace, TransformersEagerExpertsAreLearnedAsALoop) {
  const TracedStack s = traced("eager", 203.255, 76.511, 12.55);
  expect_every_kernel_attributed(s);
  const auto learned = learn_implementation({s}, hw::load_profile("h100"), "olmoe-eager");
  ASSERT_NE(learned.profile.base, nullptr);
  EXPECT_EQ(learned.profile.base->name, "eager");
}

}  // namespace
}  // namespace moesim::calibrate
