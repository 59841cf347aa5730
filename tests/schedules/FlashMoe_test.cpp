// The FlashMoE family: Table 1 kernel counts, payload efficiency, §3.2 memory, megakernel tile DAG.
#include <gtest/gtest.h>

#include <stdexcept>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/FlashMoe.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

/** FlashMoE §4's layer (H = I = 2048, top-2, capacity 1.0) on `gpus` H100s with `experts` experts. */
Scenario flash(const std::string& schedule, int gpus, int experts, std::int64_t tokens) {
  Scenario s;
  s.model = models::load_model("flashmoe-eval");
  s.model.moe.experts = experts;
  s.hw = hw::load_profile("h100");
  s.schedule = schedule;
  s.parallel.ep = gpus;
  s.workload.phase = Phase::FORWARD;
  s.workload.tokens = tokens;
  s.workload.seq_len = tokens;
  s.workload.capacity_factor = 1.0;
  s.workload.dtype = schedule == "megakernel" ? models::DType::FP32 : models::DType::FP16;
  return s;
}

int gpu_ops(const SimulationResult& r, int rank) {
  int n = 0;
  for (const auto& op : r.program->ops()) {
    if (op.rank == rank && op.kind != sim::OpKind::HOST && op.is_host_launched()) ++n;
  }
  return n;
}

int tasks(const SimulationResult& r, int rank) {
  int n = 0;
  for (const auto& op : r.program->ops()) n += op.rank == rank && op.kind == sim::OpKind::TASK ? 1 : 0;
  return n;
}

/** A number of the result's "flashmoe" figure group (GPU ops per rank, Dispatch bytes). */
double flash_figure(const SimulationResult& r, const std::string& name) {
  const FigureGroup* g = r.figure_group("flashmoe");
  if (g == nullptr) throw std::runtime_error("no flashmoe figures");
  return g->number(name).value();
}

}  // namespace

TEST(FlashMoe, BaselinesLaunchTheirTable1KernelCounts) {
  // FlashMoE Table 1: one MoE layer on 2 GPUs with 32 experts each, counted with Nsight Systems.
  const std::pair<const char*, int> table1[] = {{"megakernel", 1},        {"comet", 33},
                                                {"megatron-cutlass", 85}, {"megatron-te", 261},
                                                {"megatron-deepep", 432}, {"deepspeed-moe", 550}};
  for (auto [schedule, count] : table1) {
    auto r = simulate(flash(schedule, 2, 64, 1024));
    EXPECT_EQ(gpu_ops(r, 0), count) << schedule;
    EXPECT_EQ(flash_figure(r, "kernels_per_rank"), count) << schedule;
  }
}

TEST(FlashMoe, BalancedRoutingMakesPaddedAndPayloadEfficientEqual) {
  // Balanced routing with capacity 1.0: every source sends exactly T·k/E = 4096·2/64 = 128 rows to every
  // expert, which is also its per-source capacity, so padding adds nothing: equal bytes and equal time.
  Scenario s = flash("megakernel", 4, 64, 4096);
  auto efficient = simulate(s);
  s.options["payload"] = "padded";
  auto padded = simulate(s);
  // Off-rank rows: 4 sources x 48 remote experts x 128 rows x 2048 x 4 bytes.
  EXPECT_DOUBLE_EQ(flash_figure(efficient, "dispatch_bytes"), 4.0 * 48 * 128 * 2048 * 4);
  EXPECT_DOUBLE_EQ(flash_figure(efficient, "dispatch_routed_bytes"),
                   flash_figure(efficient, "dispatch_padded_bytes"));
  EXPECT_DOUBLE_EQ(flash_figure(padded, "dispatch_bytes"), flash_figure(efficient, "dispatch_bytes"));
  EXPECT_EQ(padded.run.makespan_ns, efficient.run.makespan_ns);
}

TEST(FlashMoe, ZipfRoutingSendsFewerBytesWhenPayloadEfficient) {
  // Skewed popularity with capacity 1.0: hot experts drop slots, cold ones get fewer than capacity, so
  // the routed rows are fewer than the padded ones; padding to capacity sends C per expert per source.
  Scenario s = flash("megakernel", 4, 64, 4096);
  s.workload.routing = models::parse_routing("zipf:1.2");
  auto efficient = simulate(s);
  EXPECT_LT(flash_figure(efficient, "dispatch_bytes"), flash_figure(efficient, "dispatch_padded_bytes"));
  EXPECT_DOUBLE_EQ(flash_figure(efficient, "dispatch_padded_bytes"), 4.0 * 48 * 128 * 2048 * 4);
  s.options["payload"] = "padded";
  auto padded = simulate(s);
  EXPECT_DOUBLE_EQ(flash_figure(padded, "dispatch_bytes"), flash_figure(efficient, "dispatch_padded_bytes"));
  auto te = simulate(flash("megatron-te", 4, 64, 4096));  // NCCL baselines pad by default
  EXPECT_DOUBLE_EQ(flash_figure(te, "dispatch_bytes"), flash_figure(te, "dispatch_padded_bytes"));
}

TEST(FlashMoe, MegakernelTileTasksFollowTheTileShape) {
  // 2 GPUs, 8 experts, 1024 tokens, balanced: rank 0 gets 1024·2/8 = 256 rows per expert from each source,
  // i.e. 2 row tiles of 128, for its 4 experts and 2 sources: 16 row tiles. Per row tile: I/64 = 32 GEMM0,
  // 1 join, H/64 = 32 GEMM1 tasks; and rank 0 combines its own 16 returned row tiles in 32 tasks each.
  // Gate: 1024/128 = 8 tasks. Total 8 + 16·65 + 16·32 = 1560.
  auto r = simulate(flash("megakernel", 2, 8, 1024));
  EXPECT_EQ(tasks(r, 0), 1560);
  Scenario wide = flash("megakernel", 2, 8, 1024);
  wide.options["tile_n"] = "128";  // 16 GEMM0 + 1 + 16 GEMM1 per row tile, 16 combine tasks per row tile
  EXPECT_EQ(tasks(simulate(wide), 0), 8 + 16 * 33 + 16 * 16);
}

TEST(FlashMoe, MegakernelIsFlatInExpertsWhileBaselinesGrow) {
  // FlashMoE Fig. 12 (16K tokens per GPU, 8 GPUs): the megakernel's work does not depend on the expert
  // count (same rows, same tiles), while Megatron-TE launches 7 more kernels per local expert.
  auto mk8 = simulate(flash("megakernel", 8, 8, 16384));
  auto mk128 = simulate(flash("megakernel", 8, 128, 16384));
  EXPECT_NEAR(mk128.layer_ms / mk8.layer_ms, 1.0, 0.1);
  auto te8 = simulate(flash("megatron-te", 8, 8, 16384));
  auto te128 = simulate(flash("megatron-te", 8, 128, 16384));
  EXPECT_GT(te128.layer_ms, te8.layer_ms);
  EXPECT_EQ(flash_figure(te128, "kernels_per_rank") - flash_figure(te8, "kernels_per_rank"), 7 * (16 - 1));
}

TEST(FlashMoe, SymmetricTensorMatchesTable3) {
  // FlashMoE Table 3 (bM = 128, fp32 tokens): ST in GB for Moonlight, Grok-1, Snowflake Arctic, Qwen3-235B,
  // Mixtral 8x7B; within 10%. (S, E, H) from the table; 1 GB read as 2^30 bytes.
  struct Row {
    std::int64_t s;
    int e;
    std::int64_t h;
    double gb;
  };
  const Row rows[] = {{8192, 64, 2048, 0.25},
                      {8192, 8, 6144, 0.75},
                      {4096, 128, 7168, 1.75},
                      {40960, 128, 4096, 3.00},
                      {32768, 8, 4096, 2.00}};
  for (const auto& row : rows) {
    const double gib = symmetric_tensor_bytes(row.s, row.e, row.h, 4, 128) / (1024.0 * 1024 * 1024);
    EXPECT_NEAR(gib, row.gb, 0.1 * row.gb) << row.s << " tokens, " << row.e << " experts";
  }
}

TEST(FlashMoe, BadOptionsAreConfigErrors) {
  Scenario s = flash("megakernel", 2, 8, 1024);
  s.options["tile_m"] = "0";
  EXPECT_THROW(simulate(s), ConfigError);
  s.options = {{"colour", "red"}};
  EXPECT_THROW(simulate(s), ConfigError);
  s.options = {{"payload", "padded"}};
  s.workload.capacity_factor = 0;
  EXPECT_THROW(simulate(s), ConfigError);
  s = flash("megatron-te", 2, 8, 1024);
  s.workload.phase = Phase::TRAIN;
  EXPECT_THROW(simulate(s), ConfigError);
  EXPECT_THROW(parse_jitter("rank:5", 1), ConfigError);
  EXPECT_THROW(parse_jitter("none", 0), ConfigError);
}

TEST(FlashMoe, JitterRepeatsAreSeededAndBarriersWaitForTheLastRank) {
  // Same seed, same quantiles. With every rank delayed by exactly D (median = p95), each schedule's layer
  // is D later than without jitter: nothing else changes.
  Scenario s = flash("megatron-te", 4, 16, 2048);
  auto quiet = simulate(s);
  s.noise = parse_jitter("rank:100,100", 3);
  auto late = simulate(s);
  EXPECT_EQ(late.repeat_layer_ms.size(), 3u);
  EXPECT_NEAR(late.layer_ms_p50 - quiet.layer_ms, 0.1, 1e-6);
  s.noise = parse_jitter("rank:50,500", 8);
  auto a = simulate(s), b = simulate(s);
  EXPECT_EQ(a.repeat_layer_ms, b.repeat_layer_ms);
  EXPECT_GE(a.layer_ms_p95, a.layer_ms_p50);
}

TEST(FlashMoe, SmUtilizationCountsThePersistentKernelsBlocks) {
  // With blocks = 66 on 132 SMs, the kernel keeps half of the SMs resident from its start (after the host
  // launch) to the end of the layer: utilization = 50% · (end − start) / end.
  Scenario s = flash("megakernel", 2, 8, 1024);
  s.options["blocks"] = "66";
  auto r = simulate(s);
  const auto& pool = r.run.ops[0];  // the first op: rank 0's persistent kernel
  ASSERT_EQ(r.program->op(0).kind, sim::OpKind::POOL);
  const double expected =
      50.0 * static_cast<double>(pool.end - pool.start) / static_cast<double>(r.run.makespan_ns);
  EXPECT_NEAR(r.sm_util_pct, expected, 0.5);
}

TEST(FlashMoe, BaselinesAgreeOnOneRankAndOnEveryRank) {
  // Balanced routing: the symmetric fast path (rank 0 stands for all) and the full per-rank run of the
  // same barrier-synchronous layer must give the same layer time.
  for (const char* schedule : {"megatron-te", "deepspeed-moe", "fastermoe"}) {
    Scenario s = flash(schedule, 4, 16, 2048);
    auto one = simulate(s);
    s.per_rank = true;
    auto all = simulate(s);
    EXPECT_TRUE(one.symmetric) << schedule;
    EXPECT_FALSE(all.symmetric) << schedule;
    EXPECT_NEAR(all.layer_ms, one.layer_ms, 1e-3 * one.layer_ms) << schedule;
  }
}

TEST(FlashMoe, MegakernelGemmTilesRunAtTheProfilesTileRate) {
  // With efficiency.tile_gemm tf32 = 0.2 the GPU runs tf32 tiles at 494.7 TF/s x 0.2 (sustained factor 1),
  // one processor at 1/132 of it: a GEMM0 tile of 128 x 64 x 2048 takes 2·128·64·2048 / (98.94e12 / 132)
  // = 44.77 us, plus the 569 ns dispatch. Compute-bound: its share of the GEMM's bytes takes ~6 us.
  Scenario s = flash("megakernel", 1, 8, 4096);
  s.options["math"] = "tf32";
  s.hw.efficiency.tile_gemm.value = {{"tf32", 0.2}};
  auto task_ns = [](const SimulationResult& r) {
    for (std::size_t i = 0; i < r.program->ops().size(); ++i) {
      if (r.program->ops()[i].name == "L0.gemm0") return r.run.ops[i].end - r.run.ops[i].start;
    }
    throw std::runtime_error("no GEMM0 tile");
  };
  const double expected_ns = 2.0 * 128 * 64 * 2048 / (494.7e12 * 0.2 / 132) * 1e9 + 569;
  EXPECT_NEAR(static_cast<double>(task_ns(simulate(s))), expected_ns, 2.0);
  // Without a measured rate for the math the tiles take the GEMM table's (cuBLAS-class) rate: far faster.
  s.hw.efficiency.tile_gemm.value.clear();
  EXPECT_LT(static_cast<double>(task_ns(simulate(s))), 0.5 * expected_ns);
}
