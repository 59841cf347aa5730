// Torch-stack records as scenarios, their comparison, and the per-op view from the trace beside a record.
#include <gtest/gtest.h>

#include <algorithm>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kTiny = std::string(MOESIM_TEST_DATA_DIR) + "/tests/calibrate/data/torch-stacks";
// Qwen3-30B-A3B at widths / 8 on H100: EP 1 forward regular and EP 2 train FarSkip, each with its trace.
const std::vector<std::string> kRecords = {
    kTiny + "/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced.json",
    kTiny + "/qwen3-30b-a3b.grouped.ep2.t256.s128.l2.train.farskip.balanced.json"};

TEST(TorchStacks, RecordBecomesTheScenarioItRan) {
  // A folder is searched recursively: the two GPU records and the CPU run under cpu-legacy/.
  EXPECT_EQ(find_torch_stack_records({kTiny}).size(), 3u);
  const auto records = find_torch_stack_records(kRecords);
  ASSERT_EQ(records.size(), 2u);
  const traces::TorchStackRecord& train = records[1];
  ASSERT_EQ(train.schedule, "farskip");
  const schedules::Scenario s = torch_stack_scenario(train, hw::load_profile("h100"), nullptr);
  EXPECT_EQ(s.schedule, "farskip");
  EXPECT_EQ(s.workload.phase, schedules::Phase::TRAIN);
  EXPECT_EQ(s.parallel.ep, 2);
  EXPECT_EQ(s.workload.tokens, 256);
  EXPECT_EQ(s.workload.layers, 2);
  // The stack's widths (Qwen3 / 8), every layer an MoE layer.
  EXPECT_EQ(s.model.hidden, 256);
  EXPECT_EQ(s.model.moe.expert_ffn, 96);
  EXPECT_EQ(s.model.dense_layers, 0);
  const schedules::Scenario regular = torch_stack_scenario(records[0], hw::load_profile("h100"), nullptr);
  EXPECT_EQ(regular.options.at("shared_overlap"), "off");
}

TEST(TorchStacks, ComparesWithTheStylesShippedProfileAndOpByOp) {
  TorchStackOptions options;
  options.ops = true;
  const auto cs = compare_torch_stacks(find_torch_stack_records(kRecords), options);
  ASSERT_EQ(cs.size(), 2u);
  for (const auto& c : cs) {
    EXPECT_EQ(c.impl, "grouped");
    EXPECT_EQ(c.hw, "h100");
    EXPECT_GT(c.predicted_ms, 0);
    ASSERT_FALSE(c.ops.empty());
    bool routed = false;
    for (const OpTimes& o : c.ops) {
      if (o.op != "routed_experts" || o.backward) continue;
      routed = true;
      EXPECT_GT(o.measured_kernels, 0);
      EXPECT_GT(o.predicted_kernels, 0);
      EXPECT_GT(o.measured_gpu_ms, 0);
    }
    EXPECT_TRUE(routed);
  }
  // --impl fused for all records.
  options.impl.all = "fused";
  options.ops = false;
  EXPECT_EQ(compare_torch_stacks(find_torch_stack_records(kRecords), options).front().impl, "fused");
}

// transformers' Qwen3MoeModel runs ops of its own outside the decoder layers' ranges: positions, the mask
// test and rotary cos/sin before the first layer, the final RMSNorm after the last. --steps names them as
// moesim's model-level ops, which the shipped transformers profiles run from first principles (22 launches
// including a sync, and an RMSNorm of 8 kernels); nothing of the forward is left outside.
TEST(TorchStacks, TheModelsOwnOpsAreRowsOfTheirOwn) {
  TorchStackOptions options;
  options.ops = true;
  const auto cs = compare_torch_stacks(
      find_torch_stack_records(
          {std::string(MOESIM_TEST_DATA_DIR) +
           "/data/torch-stacks/2026-11-27-nvidia-h200-hf/hf/"
           "qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.forward.regular.balanced.json"}),
      options);
  ASSERT_EQ(cs.size(), 1u);
  const auto row = [&](const std::string& op) {
    return std::find_if(cs[0].ops.begin(), cs[0].ops.end(), [&](const OpTimes& o) { return o.op == op; });
  };
  EXPECT_EQ(row(kOutsideOps), cs[0].ops.end());
  for (const char* op : {"model_inputs", "final_norm"}) {
    const auto r = row(op);
    ASSERT_NE(r, cs[0].ops.end()) << op;
    EXPECT_GT(r->measured_kernels, 0) << op;
    EXPECT_GT(r->predicted_kernels, 0) << op;
    // Host time from the dispatch microbenchmark's cost per op against the trace's, profiler taken out.
    EXPECT_NEAR(r->predicted_host_ms / r->measured_host_ms, 1.0, 0.5) << op;
  }
}

TEST(TorchStacks, ImplementationChoice) {
  const ImplementationChoice c = parse_implementation_choice({"loop=a.json", "grouped=fused"});
  EXPECT_EQ(c.for_style("loop"), "a.json");
  EXPECT_EQ(c.for_style("grouped"), "fused");
  // transformers' models: the shipped profiles of their own code, with the model's ops around the layers
  EXPECT_EQ(c.for_style("hf-eager"), "hf-eager");
  EXPECT_EQ(c.for_style("hf-grouped_mm"), "hf-grouped_mm");
  EXPECT_EQ(parse_implementation_choice({"x.json"}).for_style("loop"), "x.json");
  EXPECT_THROW(parse_implementation_choice({"a", "b"}), ConfigError);
  EXPECT_THROW(parse_implementation_choice({"loop="}), ConfigError);
  // A profile learned on one GPU's trace applies to that GPU's records; the others keep the style's.
  const ImplementationChoice per_gpu = parse_implementation_choice({"loop=a.json", "loop@h200=b.json"});
  EXPECT_EQ(per_gpu.for_record("loop", "h200"), "b.json");
  EXPECT_EQ(per_gpu.for_record("loop", "h100"), "a.json");
  EXPECT_EQ(per_gpu.for_record("grouped", "h200"), "grouped");
  EXPECT_EQ(parse_implementation_choice({"x.json", "loop@h200=b.json"}).for_record("loop", "h200"), "x.json");
  EXPECT_THROW(parse_implementation_choice({"@h200=b.json"}), ConfigError);
  EXPECT_THROW(parse_implementation_choice({"loop@=b.json"}), ConfigError);
  EXPECT_THROW(parse_implementation_choice({"=b.json"}), ConfigError);
}

// Records split by what set their measured pace, rank 0's issue time over its GPU time (0.6 and 0.9 the
// bounds), each group's |time error| median by hand: GPU 30 ms of issue in 100 (error -10%) and 59.9 in 100
// (+20%): median 15%; mixed 60 in 100 (-4%); host 90, 100 and 100 in 100 (+30%, -50%, +6%): 30%.
TEST(TorchStacks, ErrorsSplitByWhatSetTheMeasuredPace) {
  auto comparison = [](double issue_ms, double predicted_ms) {
    TorchStackComparison c;
    c.record.gpu_ms_p50 = 100;
    c.record.step_ms_p50 = 100;
    c.record.issue_ms_p50 = issue_ms;
    c.predicted_ms = predicted_ms;
    return c;
  };
  const std::vector<TorchStackComparison> cs = {comparison(30, 90),  comparison(59.9, 120),
                                                comparison(60, 96),  comparison(90, 130),
                                                comparison(100, 50), comparison(100, 106)};
  const std::vector<PaceErrors> by_pace = errors_by_measured_pace(cs);
  ASSERT_EQ(by_pace.size(), 3u);
  EXPECT_EQ(by_pace[0].pace, MeasuredPace::GPU);
  EXPECT_EQ(by_pace[0].records, 2);
  EXPECT_NEAR(by_pace[0].median_abs_error_pct, 15, 1e-9);
  EXPECT_EQ(by_pace[1].pace, MeasuredPace::MIXED);
  EXPECT_EQ(by_pace[1].records, 1);
  EXPECT_NEAR(by_pace[1].median_abs_error_pct, 4, 1e-9);
  EXPECT_EQ(by_pace[2].pace, MeasuredPace::HOST);
  EXPECT_EQ(by_pace[2].records, 3);
  EXPECT_NEAR(by_pace[2].median_abs_error_pct, 30, 1e-9);
  // A record without GPU time counts as the GPU's (nothing says its host set the pace).
  TorchStackComparison empty = comparison(10, 100);
  empty.record.gpu_ms_p50 = 0;
  EXPECT_EQ(measured_pace(empty.record), MeasuredPace::GPU);
}

}  // namespace
}  // namespace moesim::validate
