// Reading layer-runner results and turning each record into the scenario of the same run.
#include "moesim/schedules/Measured.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {
const std::string kFixture =
    std::string(MOESIM_TEST_DATA_DIR) + "/tests/schedules/data/layer_runner_fixture.json";

std::string config_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError>";
}
}  // namespace

TEST(Measured, ReadsEveryRecordOfTheRunner) {
  const auto runs = read_layer_runner_results(kFixture);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].device, "NVIDIA H200");
  EXPECT_EQ(runs[1].schedule, "farskip");
  EXPECT_EQ(runs[1].pointer, "/results/1");
  EXPECT_DOUBLE_EQ(runs[0].stack_ms, 1.4);
  EXPECT_EQ(runs[2].tokens_to_expert.size(), 2u);
  EXPECT_EQ(runs[2].tokens_to_expert[1][127], 16);  // 256 tokens x top-8 / 128 experts
  EXPECT_EQ(runs[0].config_key(), runs[2].config_key());
  EXPECT_EQ(profile_for_device("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(profile_for_device("AMD Instinct MI325X"), "mi325x");
  EXPECT_EQ(profile_for_device("Tesla V100"), "");
}

TEST(Measured, EachRecordBecomesTheScenarioOfTheSameRun) {
  const auto runs = read_layer_runner_results(kFixture);
  const auto hw = hw::load_profile("h200");
  const Scenario regular = measured_scenario(runs[0], hw);
  EXPECT_EQ(regular.schedule, "regular");
  EXPECT_EQ(regular.options.at("shared_overlap"), "off");  // the runner's regular blocks on every collective
  EXPECT_EQ(regular.options.at("sync_splits"), "on");
  EXPECT_EQ(regular.workload.routing.kind, models::RoutingSpec::Kind::RECORDED);
  EXPECT_EQ(regular.workload.routing.recorded, runs[0].tokens_to_expert);
  EXPECT_EQ(regular.workload.attention, hw::AttentionImpl::UNFUSED);
  EXPECT_EQ(regular.workload.layers, 2);
  EXPECT_EQ(regular.parallel.ep, 2);
  const Scenario ce = measured_scenario(runs[2], hw);
  EXPECT_EQ(ce.schedule, "farskip");
  EXPECT_EQ(ce.options.at("transport"), "copy_engine");
  EXPECT_EQ(measured_scenario(runs[1], hw).options.count("transport"), 0u);
}

TEST(Measured, SpeedupIsPredictedAgainstTheSameConfigsRegular) {
  const auto comparisons = compare_measured(read_layer_runner_results(kFixture));
  ASSERT_EQ(comparisons.size(), 3u);
  EXPECT_FALSE(comparisons[0].predicted_speedup);
  ASSERT_TRUE(comparisons[1].predicted_speedup);
  EXPECT_DOUBLE_EQ(*comparisons[1].predicted_speedup,
                   comparisons[0].predicted_ms / comparisons[1].predicted_ms);
  EXPECT_EQ(comparisons[0].hw, "h200 (calibrated)");
  EXPECT_DOUBLE_EQ(comparisons[0].error_pct(), 100.0 * (comparisons[0].predicted_ms - 1.4) / 1.4);
  // Copy-engine all-to-alls take no SMs, so the same FarSkip order cannot slow compute more than NCCL's.
  EXPECT_GT(comparisons[0].predicted_ms, comparisons[1].predicted_ms);
}

TEST(Measured, RefusesFailedChecksAndUnknownGpus) {
  auto runs = read_layer_runner_results(kFixture);
  runs[1].check_passed = false;
  EXPECT_EQ(config_error([&] { compare_measured(runs); }),
            kFixture +
                ": /results/1/check/passed is false: the runner's correctness check failed, so its time "
                "is not compared");
  runs = read_layer_runner_results(kFixture);
  runs[0].device = "Tesla V100";
  EXPECT_EQ(config_error([&] { compare_measured(runs); }),
            kFixture + ": /gpus/0/name = \"Tesla V100\" matches no shipped profile: give --hw NAME|FILE");
  runs.pop_back();  // h100 has no copy-engine all-to-all table, so only the NCCL records
  EXPECT_NO_THROW(compare_measured(runs, "h100"));
  const std::string bad = (std::filesystem::temp_directory_path() / "moesim_measured_bad.json").string();
  std::ofstream(bad) << R"({"results": [{"model": "qwen3-30b-a3b", "moe_comm": "ring"}]})";
  EXPECT_EQ(config_error([&] { read_layer_runner_results(bad); }),
            bad + ": /results/0/moe_comm = \"ring\": expected alltoall or allreduce");
}
