// Learning an implementation profile from the committed device-ci traces (Qwen3-30B-A3B widths / 8, H100).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::calibrate {
namespace {

const std::string kData = std::string(MOESIM_CALIBRATE_TEST_DATA) + "/torch-stacks";
const std::string kTrain =
    kData + "/qwen3-30b-a3b.grouped.ep2.t256.s128.l2.train.farskip.balanced.rank0.trace.json.gz";
const std::string kForward =
    kData + "/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced.rank0.trace.json.gz";

// The profile learned on hardware profile `hw` from a device run's rank-0 trace (data/torch-stacks/NAME).
LearnedImplementation learned_from_device_trace(const std::string& name, const std::string& hw) {
  const std::string trace =
      std::string(MOESIM_TEST_DATA_DIR) + "/data/torch-stacks/" + name + ".rank0.trace.json.gz";
  return learn_implementation({load_traced_stack(trace, {})}, hw::load_profile(hw), "device");
}

TEST(ImplementationLearner, RecordBesideTheTraceGivesTheConfiguration) {
  const TracedStack s = load_traced_stack(kTrain, {});
  EXPECT_EQ(s.model.name, "qwen3-30b-a3b");
  EXPECT_EQ(s.ep, 2);
  EXPECT_EQ(s.tokens, 256);
  EXPECT_EQ(s.seq, 128);
  EXPECT_GT(s.issue_ms, 0);
  EXPECT_FALSE(s.cpu_model.empty());
  // What is given wins over the record.
  EXPECT_EQ(load_traced_stack(kTrain, {"", 4, 0, 0}).ep, 4);
}

// A trace alone, as a user's own: what it shows of its configuration comes from it, checked against the
// records the traces were taken with.
TEST(ImplementationLearner, ATraceWithoutARecordGivesItsTokensSequenceAndEp1) {
  const std::string dir = testing::TempDir();
  const auto alone = [&](const std::string& trace, const std::string& name) {
    std::filesystem::copy_file(trace, dir + name, std::filesystem::copy_options::overwrite_existing);
    return dir + name;
  };
  // transformers' DeepSeek-V2-Lite, one process, traced with_stack: EP 1, 2,048 tokens in one sequence
  const std::string plain =
      alone(std::string(MOESIM_TEST_DATA_DIR) +
                "/data/torch-stacks/2026-11-29-nvidia-h200-x1-plain/plain/deepseek-v2-lite."
                "hf-grouped_mm.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz",
            "dsv2lite.trace.json.gz");
  const TracedStack s = load_traced_stack(plain, {"deepseek-v2-lite", 0, 0, 0});
  EXPECT_EQ(s.ep, 1);
  EXPECT_EQ(s.tokens, 2048);
  EXPECT_EQ(s.seq, 2048);
  EXPECT_NE(s.read_from_trace.find("tokens 2048, seq 2048"), std::string::npos) << s.read_from_trace;
  EXPECT_NE(learn_implementation({s}, hw::load_profile("h200"), "plain")
                .profile.provenance.description.find("module calls"),
            std::string::npos);
  // moesim's own stack at EP 2 (2 sequences of 128 per rank): the all-to-alls ask for the EP degree
  const std::string ep2 = alone(kTrain, "ep2.trace.json.gz");
  try {
    load_traced_stack(ep2, {"qwen3-30b-a3b", 0, 0, 0});
    FAIL() << "EP guessed for a trace with collectives";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--ep"), std::string::npos) << e.what();
  }
  const TracedStack given_ep = load_traced_stack(ep2, {"qwen3-30b-a3b", 2, 0, 0});
  EXPECT_EQ(given_ep.tokens, 256);
  EXPECT_EQ(given_ep.seq, 128);
}

TEST(ImplementationLearner, AGivenHostProbeBecomesTheProfiles) {
  // The committed record predates host probes: without --host-probe-us the profile carries none.
  EXPECT_EQ(learn_implementation({load_traced_stack(kTrain, {})}, hw::load_profile("h100"), "tiny")
                .profile.host_probe_us,
            0);
  TracedRunConfig given;
  given.host_probe_us = 7.25;
  const TracedStack s = load_traced_stack(kTrain, given);
  EXPECT_EQ(s.host_probe_us, 7.25);
  EXPECT_EQ(learn_implementation({s}, hw::load_profile("h100"), "tiny").profile.host_probe_us, 7.25);
}

TEST(ImplementationLearner, LearnsEveryOpOfBothPassesAndTheCollectives) {
  const LearnedImplementation learned =
      learn_implementation({load_traced_stack(kTrain, {})}, hw::load_profile("h100"), "tiny");
  const cost::ImplementationProfile& p = learned.profile;
  EXPECT_EQ(p.provenance.source, "learned");
  ASSERT_NE(p.base, nullptr);
  EXPECT_EQ(p.base->name, "grouped");  // no loop over experts: grouped GEMMs
  const auto gqa = models::AttentionType::GQA;
  for (cost::ImplPass pass : {cost::ImplPass::FORWARD, cost::ImplPass::BACKWARD}) {
    for (models::LayerOp op : {models::LayerOp::ATTN_NORM, models::LayerOp::ATTN_QKV,
                               models::LayerOp::ATTN_CORE, models::LayerOp::GATE, models::LayerOp::PERMUTE,
                               models::LayerOp::ROUTED_EXPERTS, models::LayerOp::UNPERMUTE}) {
      const cost::ImplOpEntry* e = p.find(op, pass, gqa);
      ASSERT_NE(e, nullptr) << models::to_string(op);
      EXPECT_FALSE(e->steps.empty()) << models::to_string(op);
      for (const cost::ImplStep& s : e->steps) {
        EXPECT_GE(s.host_ns, 0);
        if (s.kind == cost::ImplStepKind::GEMM) {
          EXPECT_GT(s.efficiency, 0);
        }
      }
    }
  }
  // The routed experts' grouped GEMMs are moesim's fc1 and fc2, one for one. The trace ran EP 2, so its steps
  // (chunk sorts among them) run only at EP > 1; at EP 1 the base's form of the op runs, its GEMMs at the
  // traced rate.
  std::map<cost::ImplCondition, std::vector<const cost::ImplStep*>> gemms;
  for (const auto& s : p.find(models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, gqa)->steps) {
    EXPECT_NE(s.when, cost::ImplCondition::ALWAYS) << s.label;
    if (s.kind == cost::ImplStepKind::GEMM) gemms[s.when].push_back(&s);
  }
  ASSERT_EQ(gemms[cost::ImplCondition::MULTI_RANK].size(), 2u);
  ASSERT_EQ(gemms[cost::ImplCondition::SINGLE_RANK].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(gemms[cost::ImplCondition::SINGLE_RANK][i]->gemm,
              gemms[cost::ImplCondition::MULTI_RANK][i]->gemm);
    EXPECT_EQ(gemms[cost::ImplCondition::SINGLE_RANK][i]->efficiency,
              gemms[cost::ImplCondition::MULTI_RANK][i]->efficiency);
  }
  // The split-size exchange (an NCCL kernel in permute) and what follows it run only with EP > 1.
  bool exchange = false;
  for (const auto& s : p.find(models::LayerOp::PERMUTE, cost::ImplPass::FORWARD, gqa)->steps)
    exchange = exchange || (s.label == "nccl" && s.when == cost::ImplCondition::MULTI_RANK);
  EXPECT_TRUE(exchange);
  for (const char* c : {"dispatch", "combine", "dispatch.bwd", "combine.bwd"})
    EXPECT_GT(p.collective_host(c).value_or(0), 0) << c;
  // The profiler's inflation is read from the record and said.
  bool said = false;
  for (const auto& note : learned.notes) said = said || note.find("host time scaled by") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ImplementationLearner, AForwardTraceLeavesBackwardToTheBase) {
  const LearnedImplementation learned =
      learn_implementation({load_traced_stack(kForward, {})}, hw::load_profile("h100"), "tiny", "eager");
  const cost::ImplementationProfile& p = learned.profile;
  EXPECT_EQ(p.base->name, "eager");
  for (const auto& e : p.ops) EXPECT_EQ(e.pass, cost::ImplPass::FORWARD);
  // EP 1: no collective was launched, so none is learned (the base answers).
  EXPECT_TRUE(p.collective_host_ns.empty());
}

// From an EP 1 trace the other way round: the base's EP > 1 steps join the traced ones where the base has
// them (grouped: the counts to the device and the chunk sort before the experts, the sort back after them),
// at the traced host's speed against the base.
TEST(ImplementationLearner, AnEp1TraceGainsTheBasesExpertParallelSteps) {
  const LearnedImplementation learned =
      learn_implementation({load_traced_stack(kForward, {})}, hw::load_profile("h100"), "tiny", "grouped");
  const cost::ImplementationProfile& p = learned.profile;
  const auto gqa = models::AttentionType::GQA;
  const cost::ImplOpEntry* base = p.base->find(models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, gqa);
  const cost::ImplOpEntry* entry = p.find(models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, gqa);
  ASSERT_NE(entry, p.base->find(models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, gqa));
  std::vector<std::string> multi_rank, base_multi_rank;
  for (const auto& s : base->steps)
    if (s.when == cost::ImplCondition::MULTI_RANK) base_multi_rank.push_back(s.label);
  for (const auto& s : entry->steps)
    if (s.when == cost::ImplCondition::MULTI_RANK) multi_rank.push_back(s.label);
  ASSERT_EQ(multi_rank, base_multi_rank);  // counts_to_device, sync, sort_chunks, unsort_chunks
  EXPECT_EQ(entry->steps.front().label, base_multi_rank.front());
  EXPECT_EQ(entry->steps.back().label, base_multi_rank.back());
  EXPECT_EQ(entry->steps.back().when, cost::ImplCondition::MULTI_RANK);
  // Scaled alike: the sort's host time per chunk over the base's is its fixed host time's ratio.
  const auto sort = [](const cost::ImplOpEntry* e) {
    return *std::find_if(e->steps.begin(), e->steps.end(),
                         [](const auto& s) { return s.label == "sort_chunks"; });
  };
  const double ratio = sort(entry).host_ns / sort(base).host_ns;
  EXPECT_GT(ratio, 0.2);
  EXPECT_LT(ratio, 5.0);
  EXPECT_NEAR(sort(entry).host_ns_per_chunk / sort(base).host_ns_per_chunk, ratio, 1e-9);
}

// A profile learned from Qwen3 (per-head q/k norms) charges those norms only to models that have them: the
// 16 forward kernels of the two RMSNorm calls per layer (traces' qk_norm range) become attn_qkv steps `when:
// qk_norm`, with their gradients, and a model without the norms (Mixtral) runs the other steps alone.
TEST(ImplementationLearner, PerHeadQueryKeyNormsAreStepsOnlyModelsWithThemRun) {
  const LearnedImplementation learned = learned_from_device_trace(
      "2026-11-28-nvidia-h200-x2-c/ep2/qwen3-30b-a3b.grouped.ep2.t2048.s2048.l2.train.regular.balanced",
      "h200");
  for (cost::ImplPass pass : {cost::ImplPass::FORWARD, cost::ImplPass::BACKWARD}) {
    const cost::ImplOpEntry* qkv =
        learned.profile.find(models::LayerOp::ATTN_QKV, pass, models::AttentionType::GQA);
    ASSERT_NE(qkv, nullptr);
    int conditional = 0, always = 0;
    for (const cost::ImplStep& s : qkv->steps) {
      conditional += s.when == cost::ImplCondition::QK_NORM;
      always += s.when == cost::ImplCondition::ALWAYS;
      if (s.when == cost::ImplCondition::QK_NORM) {
        EXPECT_NE(s.kind, cost::ImplStepKind::GEMM) << s.label;
      }
    }
    if (pass == cost::ImplPass::FORWARD) {
      EXPECT_EQ(conditional, 16);
    }
    EXPECT_GE(conditional, 16);
    EXPECT_GT(always, 0);  // the projection and RoPE: every model's
  }
  // No other op learns a conditional step.
  for (const cost::ImplOpEntry& e : learned.profile.ops) {
    if (e.op == models::LayerOp::ATTN_QKV) continue;
    for (const cost::ImplStep& s : e.steps)
      EXPECT_NE(s.when, cost::ImplCondition::QK_NORM) << models::to_string(e.op) << " " << s.label;
  }
}

// A trace of a model without a feature cannot show its kernels: the learned ops take the base's steps for it
// (the grouped base: Qwen3's per-head q/k norms, 16 forward kernels; Qwen2-MoE's gate on the shared experts,
// 3 forward and 7 backward), so a profile learned from Mixtral or DeepSeek-V2-Lite still charges a Qwen3 or a
// Qwen1.5 for them. A traced model with the feature keeps its own (the Qwen3 test above).
TEST(ImplementationLearner, FeaturesNoTracedModelHasComeFromTheBase) {
  auto count = [](const cost::ImplementationProfile& p, models::LayerOp op, cost::ImplPass pass,
                  models::AttentionType attention, cost::ImplCondition when) {
    const cost::ImplOpEntry* e = p.find(op, pass, attention);
    if (e == nullptr) return -1;
    return static_cast<int>(std::count_if(e->steps.begin(), e->steps.end(),
                                          [&](const cost::ImplStep& s) { return s.when == when; }));
  };
  using models::AttentionType;
  using models::LayerOp;
  const LearnedImplementation mixtral = learned_from_device_trace(
      "2026-11-28-nvidia-h200-x2-b/ep2/mixtral-8x7b.grouped.ep2.t8192.s4096.l2.train.regular.balanced",
      "h200");
  ASSERT_FALSE(mixtral.profile.ops.empty());
  EXPECT_EQ(count(mixtral.profile, LayerOp::ATTN_QKV, cost::ImplPass::FORWARD, AttentionType::GQA,
                  cost::ImplCondition::QK_NORM),
            16);
  EXPECT_TRUE(std::any_of(mixtral.notes.begin(), mixtral.notes.end(),
                          [](const std::string& n) { return n.find("qk_norm") != std::string::npos; }));
  const LearnedImplementation deepseek = learned_from_device_trace(
      "2026-11-29-nvidia-h200-x1-plain/plain/deepseek-v2-lite.hf-grouped_mm.ep1.t2048.s2048.l2.train.regular."
      "balanced",
      "h200");
  EXPECT_EQ(count(deepseek.profile, LayerOp::SHARED_EXPERTS, cost::ImplPass::FORWARD, AttentionType::MLA,
                  cost::ImplCondition::SHARED_GATE),
            3);
  EXPECT_EQ(count(deepseek.profile, LayerOp::SHARED_EXPERTS, cost::ImplPass::BACKWARD, AttentionType::MLA,
                  cost::ImplCondition::SHARED_GATE),
            7);
  // the gate's steps are the shared experts' alone
  for (const cost::ImplOpEntry& e : deepseek.profile.ops) {
    if (e.op == LayerOp::SHARED_EXPERTS) continue;
    for (const cost::ImplStep& s : e.steps) EXPECT_NE(s.when, cost::ImplCondition::SHARED_GATE);
  }
}

// transformers 5.17's eager experts index the stacked weights [E, 2F, H] and [E, H, F] per expert, so
// autograd zero-fills and accumulates a whole-size weight gradient for every expert: a loop in backward whose
// body moves E * F * H elements (times 2 for gate/up), which only the expert_weights width can explain. Its
// first two iterations differ from the rest (no accumulation yet; an out-of-place add), which the loop search
// must allow.
TEST(ImplementationLearner, TransformersEagerBackwardIsALoopOverWholeWeightGradients) {
#ifdef MOESIM_SANITIZED
  // A 2.9 MB (gzip) trace of about 15,000 launches: 14 s in Release, past 12 CPU minutes under ASan in Debug.
  GTEST_SKIP() << "runs in the Release suite only";
#endif
  const LearnedImplementation learned = learned_from_device_trace(
      "2026-11-27-nvidia-h100-x1-hfnorm/hf/qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.train.regular.balanced",
      "h100");
  const cost::ImplOpEntry* backward = learned.profile.find(
      models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::BACKWARD, models::AttentionType::GQA);
  ASSERT_NE(backward, nullptr);
  int per_expert = 0, whole_weights = 0;
  for (const cost::ImplStep& s : backward->steps) {
    if (s.repeat != cost::ImplRepeat::PER_EXPERT) continue;
    ++per_expert;
    if (s.kind == cost::ImplStepKind::MEMORY && s.width == cost::ImplWidth::EXPERT_WEIGHTS) ++whole_weights;
  }
  EXPECT_GT(per_expert, 0);
  // Per expert: a fill and an accumulation of each of the two stacked weights' gradients.
  EXPECT_GE(whole_weights, 4);
  // The forward's per-expert GEMMs (128 rows of Qwen3's experts) run slower than the H100 table: the excess
  // is learned per launch, at the table's rate, and is less than the 4-5 us those kernels take in the trace.
  const cost::ImplOpEntry* forward = learned.profile.find(
      models::LayerOp::ROUTED_EXPERTS, cost::ImplPass::FORWARD, models::AttentionType::GQA);
  ASSERT_NE(forward, nullptr);
  int loop_gemms = 0;
  for (const cost::ImplStep& s : forward->steps) {
    if (s.kind != cost::ImplStepKind::GEMM || s.repeat != cost::ImplRepeat::PER_EXPERT) continue;
    ++loop_gemms;
    EXPECT_DOUBLE_EQ(s.efficiency, 1) << s.label;
    EXPECT_GT(s.kernel_overhead_ns, 0) << s.label;
    EXPECT_LT(s.kernel_overhead_ns, 4e3) << s.label;
  }
  EXPECT_EQ(loop_gemms, 2);  // fc1, fc2
  bool said = false;
  for (const auto& note : learned.notes)
    said = said || note.find("routed_experts backward: ") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace moesim::calibrate
