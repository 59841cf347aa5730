#include "moesim/kernels/TileGemmPlan.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace moesim::kernels {
namespace {

// The FlashMoE evaluation layer (H = I = 2048) with 2048 tokens routed to one expert.
TEST(TileGemmPlanTest, CountsTheTilesOfAnExpertGemm) {
  const TileGemmPlan plan = TileGemmPlan::for_tokens(2048, 2048, 2048);
  EXPECT_EQ(plan.tiles_m(), 16);
  EXPECT_EQ(plan.tiles_n(), 32);
  EXPECT_EQ(plan.tiles(), 512);
  EXPECT_DOUBLE_EQ(plan.flops_per_tile(), 2.0 * 128 * 64 * 2048);  // 33.55 MFLOP
}

// FlashMoE pads expert capacity to bM: 1000 tokens occupy 8 tiles of 128 rows.
TEST(TileGemmPlanTest, PadsTokensToWholeTiles) {
  EXPECT_EQ(padded_rows(1000, 128), 1024);
  EXPECT_EQ(padded_rows(128, 128), 128);
  EXPECT_EQ(TileGemmPlan::for_tokens(1, 64, 8).m, 128);
  EXPECT_THROW(TileGemmPlan::for_tokens(0, 2048, 2048), std::invalid_argument);
  EXPECT_THROW(TileGemmPlan::for_tokens(128, 2000, 2048), std::invalid_argument);
  EXPECT_THROW(TileGemmPlan::for_tokens(128, 2048, 2044), std::invalid_argument);
}

// FlashMoE's own bound on the operand pipeline (kleos/types.cuh ACC::GSM):
// BLOCK_K_FULL · pipeStages · sizeof(Element) · (BLOCK_M + BLOCK_N) = 8 · 4 · 4 · 192 for tf32.
TEST(TileGemmPlanTest, PipelineFitsFlashMoesSharedMemoryFormula) {
  const TileGemmPlan plan = TileGemmPlan::for_tokens(128, 2048, 2048);
  EXPECT_EQ(plan.pipeline_bytes(4), 24576);
  EXPECT_EQ(plan.pipeline_bytes(2), 12288);
}

// 512 tiles over an H100's 2 · 132 − 1 = 263 processor blocks: 249 blocks run 2, 14 run 1.
TEST(TileGemmPlanTest, SplitsTasksRoundRobinOverThePersistentGrid) {
  EXPECT_EQ(task_waves(512, 263), 2);
  EXPECT_EQ(tasks_of_block(512, 263, 0), 2);
  EXPECT_EQ(tasks_of_block(512, 263, 248), 2);
  EXPECT_EQ(tasks_of_block(512, 263, 249), 1);
  EXPECT_EQ(tasks_of_block(512, 263, 262), 1);
  std::int64_t total = 0;
  for (std::int64_t b = 0; b < 263; ++b) total += tasks_of_block(512, 263, b);
  EXPECT_EQ(total, 512);
  EXPECT_EQ(tasks_of_block(10, 263, 20), 0);
}

TEST(TileGemmPlanTest, NanosecondsPerTaskCountProcessorTime) {
  // 132 blocks, 8 tasks each, in 1 ms: each task took 125 us of one block's time.
  EXPECT_DOUBLE_EQ(ns_per_task(1e-3, 132, 132 * 8), 125000.0);
  EXPECT_DOUBLE_EQ(ns_per_task(1e-3, 132, 0), 0.0);
}

}  // namespace
}  // namespace moesim::kernels
