// Lookups on the tiny profile (TinyProfile.hpp); every expectation is computed in its comment.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "TinyProfile.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"

using moesim::ConfigError;
using moesim::hw::AttentionPass;
using moesim::hw::CollectiveKind;
using moesim::hw::CollectiveScope;
using moesim::hw::testing::tiny_profile;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGB = 1e9;

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError>";
}
}  // namespace

TEST(HwProfileLookup, UnitsAreConvertedToSiOnce) {
  auto p = tiny_profile();
  EXPECT_DOUBLE_EQ(p.gpu.hbm_bw_Bps, 2000e9);       // 2000 GBps
  EXPECT_DOUBLE_EQ(p.gpu.l2_bytes, 40.0 * kMiB);    // 40 MiB
  EXPECT_DOUBLE_EQ(p.gpu.launch_overhead_s, 4e-6);  // 4 us
  EXPECT_DOUBLE_EQ(p.gpu.peak_clock_hz, 1e9);       // 1000 MHz
  EXPECT_DOUBLE_EQ(p.network.nic_bw_Bps, 50e9);     // 400 Gbit/s = 50 GB/s
  EXPECT_DOUBLE_EQ(p.node.fabric.per_gpu_bw_Bps, 448e9);
  EXPECT_DOUBLE_EQ(p.collectives[0].step_latency_s, 10e-6);
  EXPECT_DOUBLE_EQ(p.collectives[0].busbw_Bps[1], 200e9);
}

TEST(HwProfileLookup, PeakFlopsAndUnknownDtypes) {
  auto p = tiny_profile();
  EXPECT_DOUBLE_EQ(p.peak_flops("bf16"), 1000e12);
  EXPECT_DOUBLE_EQ(p.sustained_peak_flops("bf16"), 500e12);  // sustained_clock_factor 0.5
  EXPECT_EQ(message_of([&] { p.peak_flops("int4"); }),
            "tiny.json: /gpu/peak_tflops/int4 is not a known dtype (known: fp32, tf32, bf16, fp16, fp8)");
  EXPECT_EQ(message_of([&] { p.peak_flops("fp16"); }),
            "tiny.json: /gpu/peak_tflops/fp16 is not given: TestGPU has no fp16 peak (given: bf16, fp8)");
}

TEST(HwProfileLookup, GemmEfficiencyIsBilinearInLogMAndLogMinNk) {
  auto p = tiny_profile();
  // Table m {16, 256} x min_nk {1024, 4096} = [[0.1, 0.2], [0.5, 0.8]].
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(16, 1024, 1024), 0.1);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(256, 4096, 4096), 0.8);
  // m 64, n=k=2048: both weights 0.5 -> rows 0.15 and 0.65 -> 0.4.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(64, 2048, 2048), 0.4);
  // Only min(n, k) matters: n 8192, k 2048 is the same point.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(64, 8192, 2048), 0.4);
  // Clamped: m 4096 -> row 256, min_nk 512 -> column 1024: 0.5. m 0 (no tokens) -> row 16.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(4096, 512, 9999), 0.5);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(0, 1024, 1024), 0.1);
}

TEST(HwProfileLookup, MeasuredGemmShapesComeBeforeTheTable) {
  auto p = tiny_profile();
  p.efficiency.gemm_shapes.shapes.push_back({1536, 2048, {256, 1024}, {0.25, 0.6}});
  // Measured points are exact.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(256, 1536, 2048), 0.25);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(1024, 1536, 2048), 0.6);
  // Time per n·k unit is m / efficiency: 1024 at m 256, 1706.67 at m 1024. m 512 is a third of the way:
  // 1024 + 682.67 / 3 = 1251.56, so the efficiency is 512 / 1251.56 = 0.40909.
  EXPECT_NEAR(p.gemm_efficiency(512, 1536, 2048), 512.0 / (1024.0 + (1024.0 / 0.6 - 1024.0) / 3.0), 1e-12);
  EXPECT_NEAR(p.gemm_efficiency(512, 1536, 2048), 0.40909, 1e-5);
  // Fewer rows than measured follow the table, scaled to 0.25 at m 256. min_nk 1536 sits
  // log2(1.5) / 2 = 0.29248 of the way from column 1024 to 4096: rows 16 and 256 give 0.129248 and
  // 0.587744; m 128 is 3/4 of the way in log m: 0.473120. 0.25 x 0.473120 / 0.587744 = 0.201244.
  const double column = std::log2(1.5) / 2;
  const double row16 = 0.1 + column * 0.1, row256 = 0.5 + column * 0.3;
  const double row128 = row16 + 0.75 * (row256 - row16);
  EXPECT_NEAR(p.gemm_efficiency(128, 1536, 2048), 0.25 * row128 / row256, 1e-12);
  EXPECT_NEAR(p.gemm_efficiency(128, 1536, 2048), 0.201244, 1e-6);
  // Below the table's first row (16) too, the time stays that of 16 rows: half the rows, half of it.
  EXPECT_NEAR(p.gemm_efficiency(8, 1536, 2048), 0.25 * row16 / row256 * 0.5, 1e-12);
  // A curve measured from the table's first row keeps its flat time below it.
  p.efficiency.gemm_shapes.shapes.push_back({4096, 4096, {16, 256}, {0.3, 0.9}});
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(4, 4096, 4096), 0.3 / 4);
  // More rows than measured keep the largest m's efficiency.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(8192, 1536, 2048), 0.6);
  // (n, k) must match both ways round; the transposed shape uses the table like any other shape.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(256, 2048, 1536), p.gemm_table_efficiency(256, 2048, 1536));
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(64, 2048, 2048), 0.4);
}

TEST(HwProfileLookup, AchievedGemmFlopsCombinesPeakClockTableAndDtype) {
  auto p = tiny_profile();
  // fp8: 2000 TF/s x clock 0.5 x table 0.8 (m 256, 4096) x dtype factor 0.9 = 720 TF/s.
  EXPECT_DOUBLE_EQ(p.achieved_gemm_flops("fp8", 256, 4096, 4096), 720e12);
  // bf16 has no dtype factor: 1000 x 0.5 x 0.8 = 400 TF/s.
  EXPECT_DOUBLE_EQ(p.achieved_gemm_flops("bf16", 256, 4096, 4096), 400e12);
}

TEST(HwProfileLookup, GroupedGemmIsCappedByOneGroupsIntensity) {
  auto p = tiny_profile();
  // 16 groups of 16 rows, n=k=4096: machine fill = eff(256, 4096) = 0.8; one group's intensity cap =
  // eff(16, largest min_nk 4096) = 0.2; min 0.2 x grouped factor 0.8 = 0.16.
  EXPECT_DOUBLE_EQ(p.grouped_gemm_efficiency(16, 4096, 4096, 16), 0.16);
  // 4 groups of 64, n=k=1024: fill = eff(256, 1024) = 0.5; cap = eff(64, 4096) = 0.2 + 0.5 x 0.6 = 0.5;
  // min 0.5 x 0.8 = 0.4.
  EXPECT_DOUBLE_EQ(p.grouped_gemm_efficiency(64, 1024, 1024, 4), 0.4);
}

TEST(HwProfileLookup, AttentionAndMemoryCurves) {
  auto p = tiny_profile();
  // seq {1024, 4096} -> {0.4, 0.6}; 2048 is halfway in log2: 0.5; backward x 0.5 = 0.25.
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, AttentionPass::FORWARD), 0.5);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, AttentionPass::BACKWARD), 0.25);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(100, AttentionPass::FORWARD), 0.4);  // clamped
  // A curve measured at 16 sequences x heads read for 64: equal work at seq 1024 x sqrt(64 / 16) = 2048.
  // Without the curve's batch_heads (or the call's) the call's sequences x heads do not matter.
  using moesim::hw::AttentionImpl;
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, AttentionPass::FORWARD, AttentionImpl::FUSED, 64), 0.4);
  p.efficiency.attention_fwd.batch_heads = 16;
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, AttentionPass::FORWARD, AttentionImpl::FUSED, 64), 0.5);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, AttentionPass::BACKWARD, AttentionImpl::FUSED, 64), 0.25);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, AttentionPass::FORWARD, AttentionImpl::FUSED, 0), 0.4);
  // bytes {1 MiB, 16 MiB} -> {0.3, 0.9}; 4 MiB is log2 22 of 20..24: 0.3 + 0.5 x 0.6 = 0.6.
  EXPECT_DOUBLE_EQ(p.memory_efficiency(4 * kMiB), 0.6);
  EXPECT_DOUBLE_EQ(p.memory_efficiency(1e12), 0.9);
}

// A fused backward curve replaces forward x factor for fused attention only; the unfused backward keeps the
// factor (the layer runner's kernels were not measured backward).
TEST(HwProfileLookup, AFusedBackwardCurveReplacesTheFactor) {
  auto p = tiny_profile();
  p.efficiency.attention_unfused_fwd.x = {1024, 4096};
  p.efficiency.attention_unfused_fwd.value = {0.2, 0.4};
  p.efficiency.attention_bwd.x = {1024, 4096};
  p.efficiency.attention_bwd.value = {0.1, 0.5};
  p.efficiency.attention_bwd.batch_heads = 16;
  using moesim::hw::AttentionImpl;
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, AttentionPass::BACKWARD), 0.3);  // halfway in log2
  // Read at the length of equal work, as the forward curve: 1024 x sqrt(64 / 16) = 2048.
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, AttentionPass::BACKWARD, AttentionImpl::FUSED, 64), 0.3);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, AttentionPass::FORWARD), 0.5);
  // Unfused: its forward curve x attention_bwd_factor 0.5 = 0.3 x 0.5.
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, AttentionPass::BACKWARD, AttentionImpl::UNFUSED), 0.15);
}

TEST(HwProfileLookup, BusBandwidthIsLogLinearInBytesAndClamped) {
  auto p = tiny_profile();
  // 8-GPU all-to-all: 1 MiB -> 100 GB/s, 4 MiB -> 200 GB/s; 2 MiB is the log midpoint: 150 GB/s.
  EXPECT_DOUBLE_EQ(p.busbw_Bps(CollectiveKind::ALL_TO_ALL, 8, CollectiveScope::INTRA, 2 * kMiB), 150 * kGB);
  EXPECT_DOUBLE_EQ(p.busbw_Bps(CollectiveKind::ALL_TO_ALL, 8, CollectiveScope::INTRA, 512 * 1024), 100 * kGB);
  EXPECT_DOUBLE_EQ(p.busbw_Bps(CollectiveKind::ALL_TO_ALL, 8, CollectiveScope::INTRA, 1e12), 200 * kGB);
}

TEST(HwProfileLookup, GroupSizeUsesSmallestTableThatFitsElseLargest) {
  auto p = tiny_profile();
  const auto a2a = CollectiveKind::ALL_TO_ALL;
  const auto intra = CollectiveScope::INTRA;
  // Intra all-to-all tables: 2 GPUs (40 GB/s, 5 us) and 8 GPUs (100-200 GB/s, 10 us).
  EXPECT_EQ(p.collective_table(a2a, 2, intra).gpus, 2);
  EXPECT_EQ(p.collective_table(a2a, 3, intra).gpus, 8);   // smallest >= 3
  EXPECT_EQ(p.collective_table(a2a, 64, intra).gpus, 8);  // none >= 64: the largest
  EXPECT_DOUBLE_EQ(p.step_latency_s(a2a, 2, intra), 5e-6);
  EXPECT_DOUBLE_EQ(p.step_latency_s(a2a, 4, intra), 10e-6);
  EXPECT_DOUBLE_EQ(p.busbw_Bps(a2a, 2, intra, 1 * kMiB), 40 * kGB);
  EXPECT_DOUBLE_EQ(p.busbw_Bps(a2a, 32, CollectiveScope::INTER, 1 * kMiB), 50 * kGB);
}

TEST(HwProfileLookup, CollectiveTimeIsStepsTimesLatencyPlusBusBytesOverBusbw) {
  auto p = tiny_profile();
  // All-reduce, 4 GPUs, 1 MiB: 2(4-1) = 6 steps x 1 us = 6 us; bus bytes 1 MiB x 2 x 3/4 = 1572864 B
  // at 120 GB/s = 13.1072 us; total 19.1072 us.
  EXPECT_NEAR(p.collective_time_s(CollectiveKind::ALL_REDUCE, 4, CollectiveScope::INTRA, kMiB), 19.1072e-6,
              1e-12);
  // All-to-all, 8 GPUs, 1 MiB: 1 step x 10 us + 1 MiB x 7/8 / 100 GB/s = 10 + 9.17504 = 19.17504 us.
  EXPECT_NEAR(p.collective_time_s(CollectiveKind::ALL_TO_ALL, 8, CollectiveScope::INTRA, kMiB), 19.17504e-6,
              1e-12);
  EXPECT_EQ(p.collective_time_s(CollectiveKind::ALL_TO_ALL, 1, CollectiveScope::INTRA, kMiB), 0.0);
  EXPECT_EQ(moesim::hw::collective_steps(CollectiveKind::ALL_GATHER, 8), 7);
  EXPECT_EQ(moesim::hw::collective_steps(CollectiveKind::ALL_REDUCE, 8), 14);
  EXPECT_EQ(moesim::hw::collective_steps(CollectiveKind::ALL_TO_ALL, 8), 1);
  EXPECT_DOUBLE_EQ(moesim::hw::bus_bytes(CollectiveKind::REDUCE_SCATTER, 4, 4000), 3000);
}

TEST(HwProfileLookup, MissingCollectiveIsReported) {
  auto p = tiny_profile();
  EXPECT_TRUE(p.has_collective(CollectiveKind::ALL_TO_ALL, CollectiveScope::INTER));
  EXPECT_FALSE(p.has_collective(CollectiveKind::ALL_GATHER, CollectiveScope::INTRA));
  EXPECT_FALSE(p.has_collective(CollectiveKind::ALL_REDUCE, CollectiveScope::INTER));
  EXPECT_EQ(message_of([&] { p.busbw_Bps(CollectiveKind::ALL_GATHER, 8, CollectiveScope::INTRA, kMiB); }),
            "tiny.json: /collectives has no all_gather table for scope intra");
}

TEST(HwProfileLookup, UnfusedAttentionHasItsOwnOptionalCurve) {
  auto p = tiny_profile();
  EXPECT_EQ(
      message_of(
          [&] { p.attention_efficiency(2048, AttentionPass::FORWARD, moesim::hw::AttentionImpl::UNFUSED); }),
      "tiny.json: /efficiency/attention_unfused_fwd is missing: unfused attention needs a curve calibrated "
      "from attention_bench results");
  auto document = moesim::hw::testing::tiny_profile_document();
  document["efficiency"]["attention_unfused_fwd"] = {
      {"seq", {1024, 4096}}, {"value", {0.05, 0.09}}, {"source", "t"}};
  auto q = moesim::hw::profile_from_json(document, "tiny.json");
  // 2048 is the log2 midpoint: 0.07; backward x 0.5; the fused curve is untouched (0.5).
  EXPECT_DOUBLE_EQ(q.attention_efficiency(2048, AttentionPass::FORWARD, moesim::hw::AttentionImpl::UNFUSED),
                   0.07);
  EXPECT_DOUBLE_EQ(q.attention_efficiency(2048, AttentionPass::BACKWARD, moesim::hw::AttentionImpl::UNFUSED),
                   0.035);
  EXPECT_DOUBLE_EQ(q.attention_efficiency(2048, AttentionPass::FORWARD), 0.5);
}

TEST(HwProfileLookup, CopyEngineTablesServeOnlyCopyEngineTransfers) {
  auto document = moesim::hw::testing::tiny_profile_document();
  document["collectives"].push_back({{"kind", "all_to_all"},
                                     {"scope", "intra"},
                                     {"gpus", 2},
                                     {"algorithm", "copy_engine"},
                                     {"step_latency_us", 20},
                                     {"busbw", {{{"bytes", 1048576}, {"GBps", 300}}}},
                                     {"source", "t"}});
  auto p = moesim::hw::profile_from_json(document, "tiny.json");
  const auto a2a = CollectiveKind::ALL_TO_ALL;
  const auto intra = CollectiveScope::INTRA;
  EXPECT_DOUBLE_EQ(p.busbw_Bps(a2a, 2, intra, kMiB), 40 * kGB);  // the NCCL table of 2 GPUs
  EXPECT_DOUBLE_EQ(p.busbw_Bps(a2a, 2, intra, kMiB, true), 300 * kGB);
  EXPECT_DOUBLE_EQ(p.step_latency_s(a2a, 8, intra, true), 20e-6);  // the only copy-engine table
  EXPECT_FALSE(p.has_collective(CollectiveKind::ALL_TO_ALL, CollectiveScope::INTER, true));
  EXPECT_EQ(message_of([&] { p.busbw_Bps(CollectiveKind::ALL_REDUCE, 4, intra, kMiB, true); }),
            "tiny.json: /collectives has no copy-engine all_reduce table for scope intra");
}

TEST(HwProfileLookup, FabricAndNetworkRates) {
  auto p = tiny_profile();
  // Mesh: one usable 48 GB/s link per peer, at most 7.
  EXPECT_DOUBLE_EQ(p.fabric_injection_bw_Bps(3), 3 * 48 * kGB);
  EXPECT_DOUBLE_EQ(p.fabric_injection_bw_Bps(10), 7 * 48 * kGB);
  // 8 NICs x 48 GB/s shared by 8 GPUs.
  EXPECT_DOUBLE_EQ(p.network_bw_per_gpu_Bps(), 48 * kGB);
  // The same profile as a switch: every peer count gets all 7 links.
  p.node.fabric.type = moesim::hw::FabricType::SWITCH;
  EXPECT_DOUBLE_EQ(p.fabric_injection_bw_Bps(1), 7 * 48 * kGB);
}

TEST(CollectiveKindNames, RoundTripAndErrors) {
  using moesim::hw::parse_collective_kind;
  for (auto kind : {CollectiveKind::ALL_TO_ALL, CollectiveKind::ALL_REDUCE, CollectiveKind::ALL_GATHER,
                    CollectiveKind::REDUCE_SCATTER}) {
    EXPECT_EQ(parse_collective_kind(to_string(kind)), kind);
  }
  EXPECT_EQ(to_string(CollectiveKind::REDUCE_SCATTER), "reduce_scatter");
  EXPECT_EQ(moesim::hw::parse_collective_scope("inter"), CollectiveScope::INTER);
  EXPECT_EQ(message_of([] { parse_collective_kind("alltoall"); }),
            "<input>: unknown collective kind 'alltoall' (known: all_to_all, all_reduce, all_gather, "
            "reduce_scatter)");
  EXPECT_FALSE(moesim::hw::try_parse_collective_scope("global").has_value());
}

TEST(HwProfileLookup, GemmSlowdownWithCommFollowsKernelLength) {
  auto p = tiny_profile();
  // No table: every GEMM takes compute_slowdown_with_comm (1.05 in the tiny profile).
  EXPECT_DOUBLE_EQ(p.gemm_slowdown_with_comm(30e-6), 1.05);
  // 10 us -> 1.2, 40 us -> 1.6: 20 us is half way in log2 length (1 of 2 octaves) -> 1.4; clamped outside.
  p.contention.gemm_kernel_s = {10e-6, 40e-6};
  p.contention.gemm_slowdown = {1.2, 1.6};
  EXPECT_NEAR(p.gemm_slowdown_with_comm(20e-6), 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(p.gemm_slowdown_with_comm(1e-6), 1.2);
  EXPECT_DOUBLE_EQ(p.gemm_slowdown_with_comm(1e-3), 1.6);
}

TEST(HwProfileLookup, GemmSmFractionCountsTiles) {
  // 128x128 tiles: 8192x1536 -> 64 x 12 = 768 tiles, more than 132 SMs -> 1; 512x1536 -> 4 x 12 = 48 of 132;
  // a 1x1 product still takes one SM; 8 groups of 128x128 -> 8 tiles.
  EXPECT_DOUBLE_EQ(moesim::hw::gemm_sm_fraction(8192, 1536, 1, 132), 1.0);
  EXPECT_DOUBLE_EQ(moesim::hw::gemm_sm_fraction(512, 1536, 1, 132), 48.0 / 132);
  EXPECT_DOUBLE_EQ(moesim::hw::gemm_sm_fraction(1, 1, 1, 132), 1.0 / 132);
  EXPECT_DOUBLE_EQ(moesim::hw::gemm_sm_fraction(128, 128, 8, 132), 8.0 / 132);
}
