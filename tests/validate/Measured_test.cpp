// Reading layer-runner results and turning each record into the scenario of the same run.
#include "moesim/validate/Measured.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <tuple>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

using namespace moesim;
using namespace moesim::schedules;
using namespace moesim::validate;

namespace {
const std::string kFixture =
    std::string(MOESIM_TEST_DATA_DIR) + "/tests/validate/data/layer_runner_fixture.json";

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

TEST(Measured, ASpeedupPairsOnlyRunsWithTheSameExpertKernels) {
  // A FarSkip run with grouped expert GEMMs has no regular run of its kind here: no predicted speedup,
  // rather than one against the per-expert-loop regular run.
  auto runs = read_layer_runner_results(kFixture);
  runs[1].experts = "grouped";
  EXPECT_NE(runs[0].config_key(), runs[1].config_key());
  EXPECT_NE(runs[1].label().find("grouped experts"), std::string::npos);
  const auto comparisons = compare_measured(runs);
  EXPECT_FALSE(comparisons[1].predicted_speedup);
  EXPECT_TRUE(comparisons[2].predicted_speedup);
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
  std::ofstream(bad)
      << R"({"schema_version": 1, "results": [{"model": "qwen3-30b-a3b", "moe_comm": "ring"}]})";
  EXPECT_EQ(config_error([&] { read_layer_runner_results(bad); }),
            bad + ": /results/0/moe_comm = \"ring\": expected alltoall or allreduce");
}

namespace {
/** A record of qwen3-30b-a3b EP4 T2048 next to a prediction, with the numbers a test picks. */
MeasuredComparison record(const std::string& schedule, double stack_ms, double predicted_ms,
                          std::optional<double> speedup = {}, std::optional<double> predicted_speedup = {},
                          const std::string& hw = "h200 (calibrated)") {
  MeasuredComparison c;
  c.run.device = "NVIDIA H200";
  c.run.model = "qwen3-30b-a3b";
  c.run.moe_comm = "alltoall";
  c.run.phase = "forward";
  c.run.schedule = schedule;
  c.run.routing = "balanced";
  c.run.gpus = c.run.ep = 4;
  c.run.tokens_per_rank = c.run.seq = 2048;
  c.run.stack_ms = stack_ms;
  c.run.speedup_vs_regular = speedup;
  c.hw = hw;
  c.predicted_ms = predicted_ms;
  c.predicted_speedup = predicted_speedup;
  return c;
}
}  // namespace

TEST(MeasuredConfigs, ThreeRunsOfAConfigGiveTheirMedianMinAndMax) {
  // Three leases; each FarSkip record's speedup is its own lease's regular over it.
  const std::vector<MeasuredComparison> cs = {
      record("regular", 10, 10.5), record("farskip", 9, 8, 10.0 / 9, 1.3),
      record("regular", 12, 10.8), record("farskip", 8, 9, 12.0 / 8, 1.1),
      record("regular", 11, 10.5), record("farskip", 10, 8.5, 11.0 / 10, 1.2),
  };
  const auto configs = summarize_by_config(cs);
  ASSERT_EQ(configs.size(), 2u);
  const MeasuredConfigSummary& regular = configs[0];
  EXPECT_EQ(regular.schedule, "regular");
  EXPECT_EQ(regular.label, "qwen3-30b-a3b EP4 T2048 s2048 balanced regular");
  EXPECT_EQ(regular.hw, "h200 (calibrated)");
  EXPECT_EQ(regular.runs, 3);
  EXPECT_DOUBLE_EQ(regular.measured_ms_median, 11);
  EXPECT_DOUBLE_EQ(regular.measured_ms_min, 10);
  EXPECT_DOUBLE_EQ(regular.measured_ms_max, 12);
  EXPECT_DOUBLE_EQ(regular.predicted_ms, 10.5);
  EXPECT_DOUBLE_EQ(regular.error_pct(), 100.0 * (10.5 - 11) / 11);
  EXPECT_FALSE(regular.speedup_median);
  EXPECT_FALSE(regular.predicted_speedup_median);

  const MeasuredConfigSummary& farskip = configs[1];
  EXPECT_EQ(farskip.schedule, "farskip");
  EXPECT_EQ(farskip.runs, 3);
  EXPECT_DOUBLE_EQ(farskip.measured_ms_median, 9);
  EXPECT_DOUBLE_EQ(farskip.predicted_ms, 8.5);
  // Speedups 1.111, 1.5, 1.1: the median is lease 1's 10/9, while the ratio of the median times,
  // 11/9 = 1.222, would pair lease 3's regular with lease 1's FarSkip.
  ASSERT_TRUE(farskip.speedup_median && farskip.speedup_min && farskip.speedup_max);
  EXPECT_DOUBLE_EQ(*farskip.speedup_median, 10.0 / 9);
  EXPECT_GT(std::abs(*farskip.speedup_median - 11.0 / 9), 0.1);
  EXPECT_DOUBLE_EQ(*farskip.speedup_min, 1.1);
  EXPECT_DOUBLE_EQ(*farskip.speedup_max, 1.5);
  EXPECT_DOUBLE_EQ(*farskip.predicted_speedup_median, 1.2);
}

TEST(MeasuredConfigs, AnEvenCountTakesTheMeanOfTheTwoMiddleValues) {
  const std::vector<MeasuredComparison> cs = {
      record("farskip", 9, 8, 1.04, 1.3),
      record("farskip", 12, 9, 1.5, 1.1),
      record("farskip", 8, 7, 1.1, 1.2),
      record("farskip", 10, 10, 1.2, 1.0),
      record("farskip", 7, 6),  // no speedup: counts for the times only
  };
  auto configs = summarize_by_config({cs.begin(), cs.end() - 1});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].runs, 4);
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_median, 9.5);  // (9 + 10) / 2 of 8 9 10 12
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_min, 8);
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_max, 12);
  EXPECT_DOUBLE_EQ(configs[0].predicted_ms, 8.5);                // (8 + 9) / 2 of 7 8 9 10
  EXPECT_DOUBLE_EQ(*configs[0].speedup_median, 1.15);            // (1.1 + 1.2) / 2
  EXPECT_DOUBLE_EQ(*configs[0].predicted_speedup_median, 1.15);  // (1.1 + 1.2) / 2
  EXPECT_DOUBLE_EQ(*configs[0].speedup_min, 1.04);

  configs = summarize_by_config(cs);
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].runs, 5);
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_median, 9);  // of 7 8 9 10 12
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_min, 7);
  EXPECT_DOUBLE_EQ(*configs[0].speedup_median, 1.15);  // the fifth run has none
}

TEST(MeasuredConfigs, GroupsOnlyTheSameConfigScheduleAndProfile) {
  MeasuredComparison other_tokens = record("farskip", 5, 5, 1.2, 1.2);
  other_tokens.run.tokens_per_rank = 1024;
  const std::vector<MeasuredComparison> cs = {
      record("farskip", 9, 8, 1.2, 1.3),
      record("farskip", 3, 3, 1.4, 1.4, "h100 (calibrated)"),
      record("farskip-ce", 4, 4),
      record("farskip", 11, 10, 1.0, 1.1),
      other_tokens,
      record("farskip", 10, 9, 1.1, 1.2),
  };
  const auto configs = summarize_by_config(cs);
  ASSERT_EQ(configs.size(), 4u);  // in order of first appearance
  EXPECT_EQ(configs[0].runs, 3);
  EXPECT_DOUBLE_EQ(configs[0].measured_ms_median, 10);
  EXPECT_DOUBLE_EQ(*configs[0].speedup_median, 1.1);
  EXPECT_EQ(configs[1].hw, "h100 (calibrated)");
  EXPECT_EQ(configs[1].runs, 1);
  EXPECT_DOUBLE_EQ(configs[1].measured_ms_median, 3);
  EXPECT_EQ(configs[2].schedule, "farskip-ce");
  EXPECT_DOUBLE_EQ(configs[2].measured_ms_median, 4);
  EXPECT_FALSE(configs[2].speedup_median);
  EXPECT_EQ(configs[3].label, "qwen3-30b-a3b EP4 T1024 s2048 balanced farskip");
  EXPECT_EQ(configs[3].runs, 1);
  EXPECT_TRUE(summarize_by_config({}).empty());
}
