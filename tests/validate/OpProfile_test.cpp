// The layer runner's op profile replayed on simulated timings (validate --measured --steps).
#include "moesim/validate/OpProfile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "moesim/common/Error.hpp"
#include "moesim/validate/Measured.hpp"

using namespace moesim;
using namespace moesim::schedules;
using namespace moesim::validate;

namespace {

const OpProfileStep& step(const std::vector<OpProfileStep>& steps, const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const OpProfileStep& s) { return s.step == name; });
  if (it == steps.end()) throw std::runtime_error("no step " + name);
  return *it;
}

sim::OpTiming timing(sim::TimeNs launch_begin, sim::TimeNs launched, sim::TimeNs start, sim::TimeNs end) {
  sim::OpTiming t;
  t.launch_begin = launch_begin;
  t.launched = launched;
  t.start = start;
  t.end = end;
  return t;
}

}  // namespace

TEST(OpProfile, EachStepGetsTheGapBetweenItsComputeStreamEvents) {
  // Rank 0 of a 2-rank symmetric program, times in µs:
  //   op  host (begin-launched)  GPU (start-end)
  //   0   0-10   L0.attn_norm.a      10-20       two kernels of one step
  //   1   10-15  L0.attn_norm.b      20-30
  //   2   30-35  L0.split_sizes_to_host          host sync: blocked until 30 (op 1's end)
  //   3   35-55  L0.dispatch         55-100      collective on the comm stream
  //   4   55-60  L0.attn_core.qk     60-90
  //   5   60-65  L0.routed_experts.fc1  100-130  waits for the dispatch
  // Events by hand: ATTN_NORM 0 -> 30 (its kernels); host_sync 30 -> 35 (host done);
  // launch dispatch 35 -> 55 (host done; nothing on the compute stream); ATTN_CORE 55 -> 90;
  // wait dispatch 90 -> 100 (the collective's end); ROUTED_EXPERTS 100 -> 130. They add up to 130, the
  // compute stream's end. Host: ATTN_NORM 15, host_sync 35 - 15 = 20 (it includes the wait), launch 20,
  // ATTN_CORE 5, ROUTED_EXPERTS 5.
  sim::Program p(2, true);
  p.set_streams(0, {"compute", "comm"});
  const sim::KernelWork work;
  // Steps come from each op's origin (layer and block), as ProgramBuilder sets them.
  auto in_layer0 = [](const char* block) { return sim::OpOrigin{0, false, block}; };
  const sim::OpId a = p.add_kernel(0, 0, "L0.attn_norm.a", "attention", work, 1, {}, in_layer0("attn_norm"));
  const sim::OpId b = p.add_kernel(0, 0, "L0.attn_norm.b", "attention", work, 1, {}, in_layer0("attn_norm"));
  p.add_host_op(0, "L0.split_sizes_to_host", "host_sync", 1, {b}, in_layer0("split_sizes_to_host"));
  sim::CollectiveSpec spec;
  spec.name = "L0.dispatch";
  spec.group = {0, 1};
  spec.pair_bytes = {{0, 1}, {1, 0}};
  const sim::OpId dispatch =
      p.add_collective_member(p.add_collective(spec), 0, 1, "dispatch", 1, {a}, in_layer0("dispatch"));
  p.add_kernel(0, 0, "L0.attn_core.qk", "attention", work, 1, {}, in_layer0("attn_core"));
  p.add_kernel(0, 0, "L0.routed_experts.fc1", "routed_experts", work, 1, {dispatch},
               in_layer0("routed_experts"));
  sim::RunResult run;
  constexpr sim::TimeNs us = 1000;
  run.ops = {timing(0, 10 * us, 10 * us, 20 * us),       timing(10 * us, 15 * us, 20 * us, 30 * us),
             timing(30 * us, 35 * us, 30 * us, 35 * us), timing(35 * us, 55 * us, 55 * us, 100 * us),
             timing(55 * us, 60 * us, 60 * us, 90 * us), timing(60 * us, 65 * us, 100 * us, 130 * us)};
  const auto steps = predict_op_profile(p, run, 0);
  std::vector<std::string> names;
  for (const auto& s : steps) names.push_back(s.step);
  EXPECT_EQ(names, (std::vector<std::string>{"ATTN_NORM", "host_sync", "launch dispatch", "ATTN_CORE",
                                             "wait dispatch", "ROUTED_EXPERTS"}));
  EXPECT_DOUBLE_EQ(step(steps, "ATTN_NORM").gpu_ms, 0.030);
  EXPECT_EQ(step(steps, "ATTN_NORM").count, 1);
  EXPECT_DOUBLE_EQ(step(steps, "ATTN_NORM").host_ms, 0.015);
  EXPECT_DOUBLE_EQ(step(steps, "host_sync").gpu_ms, 0.005);
  EXPECT_DOUBLE_EQ(step(steps, "host_sync").host_ms, 0.020);
  EXPECT_DOUBLE_EQ(step(steps, "launch dispatch").gpu_ms, 0.020);
  EXPECT_DOUBLE_EQ(step(steps, "ATTN_CORE").gpu_ms, 0.035);
  EXPECT_DOUBLE_EQ(step(steps, "wait dispatch").gpu_ms, 0.010);
  EXPECT_DOUBLE_EQ(step(steps, "wait dispatch").host_ms, 0.0);
  EXPECT_DOUBLE_EQ(step(steps, "ROUTED_EXPERTS").gpu_ms, 0.030);
  EXPECT_THROW(predict_op_profile(p, run, 1), ScheduleError);  // rank 1 is not simulated
}

TEST(OpProfile, ASimulatedRecordHasTheRunnersStepsInItsOrder) {
  // A profiled run of the runner (4 H200, Qwen3-30B-A3B, 2048 tokens, regular / farskip / farskip-ce): the
  // simulation of each record must name the steps the runner measured, in the runner's order, and its
  // steps' GPU times must add up to its stack time (each step is the gap between consecutive events on
  // one stream, so the sum telescopes to the last event). Qwen3-30B-A3B has no shared experts: the
  // runner's empty SHARED_EXPERTS step launches nothing in the simulation.
  const std::string file = std::string(MOESIM_TEST_DATA_DIR) +
                           "/data/layer-runs/2026-11-22-nvidia-h200-x4-run4/lv-x4-profile/"
                           "a2a4-qwen3-30b-a3b-t2048-balanced.json";
  const auto comparisons = compare_measured(read_layer_runner_results(file));
  ASSERT_EQ(comparisons.size(), 3u);
  for (const auto& c : comparisons) {
    SCOPED_TRACE(c.run.schedule);
    ASSERT_FALSE(c.run.op_profile.empty());
    std::vector<std::string> measured, predicted;
    for (const auto& s : c.run.op_profile)
      if (s.step != "SHARED_EXPERTS") measured.push_back(s.step);
    double sum_ms = 0;
    for (const auto& s : c.predicted_op_profile) {
      predicted.push_back(s.step);
      sum_ms += s.gpu_ms;
      for (const auto& m : c.run.op_profile) {
        if (m.step == s.step) {
          EXPECT_EQ(s.count, m.count) << s.step;
        }
      }
    }
    EXPECT_EQ(predicted, measured);
    EXPECT_NEAR(sum_ms, c.predicted_ms, 1e-9);
  }
}

TEST(OpProfile, AMalformedProfileNamesItsPath) {
  const std::string bad = (std::filesystem::temp_directory_path() / "moesim_op_profile_bad.json").string();
  const std::string record =
      R"({"model": "qwen3-30b-a3b", "moe_comm": "alltoall", "phase": "forward", "schedule": "regular",
          "gpus": 2, "ep": 2, "tp": 1, "layers": 1, "tokens_per_rank": 64, "seq": 64, "routing": "balanced",
          "seed": 1, "sync_splits": true, "tokens_to_expert": [[1], [1]], "stack_ms": {"p50": 1},
          "compute_only_ms": {"p50": 1}, "comm_only_ms": {"p50": 1}, "exposed_comm_ms": 0, "overlap_pct": 0,
          "op_profile": {"full": {"rank": 2, "iterations": 5, "steps": []}}})";
  std::ofstream(bad) << R"({"schema_version": 1, "results": [)" << record << "]}";
  try {
    read_layer_runner_results(bad);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              bad + ": /results/0/op_profile/full/rank = 2: expected a rank in [0, gpus)");
  }
}
