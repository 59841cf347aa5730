#pragma once
/**
 * @file Tile-task arithmetic of an expert GEMM run the way FlashMoE's processors run it.
 *
 * FlashMoE (github.com/osayamenja/FlashMoE at f17062a, 2025-06-08, the paper's code, then named
 * "kleos") computes each expert GEMM Y[M,N] = A[M,K]·W[N,K]ᵀ as independent bM×bN output tiles, one
 * tile task per processor block at a time: csrc/include/kleos/types.cuh sets BLOCK_M 128, BLOCK_N 64
 * and THREADS 128; arch.cuh's Hardware<900, 255> (the one ACC::PeakHardware names) bK 8, 4 pipeline
 * stages (BASE_PIPE_STAGES * 2) and 2 blocks per SM, one block of the grid being the scheduler ("OS")
 * block. Expert capacity is padded to a multiple of bM (§3.2 of the paper), so every tile is whole.
 */
#include <cstdint>

namespace moesim::kernels {

/** @brief FlashMoE's block GEMM configuration on Hopper (see the file comment). */
struct TileConfig {
  int bm = 128;
  int bn = 64;
  int bk = 8;
  int stages = 4;
  int threads = 128;
  int blocks_per_sm = 2;
  int os_blocks = 1;  ///< scheduler blocks of the persistent grid that run no tile tasks
};

/** @brief The tiles of one expert GEMM of m×n outputs with inner dimension k (m padded to bm). */
struct TileGemmPlan {
  TileConfig config;
  std::int64_t m = 0;  ///< rows after padding to a multiple of bm
  std::int64_t n = 0;
  std::int64_t k = 0;

  /**
   * @brief A plan for `tokens` rows routed to the expert.
   * @throws std::invalid_argument when tokens < 1, n is not a multiple of bn or k of bk.
   */
  static TileGemmPlan for_tokens(std::int64_t tokens, std::int64_t n, std::int64_t k, TileConfig config = {});

  std::int64_t tiles_m() const { return m / config.bm; }
  std::int64_t tiles_n() const { return n / config.bn; }
  std::int64_t tiles() const { return tiles_m() * tiles_n(); }
  /** @brief 2·bm·bn·k: the FLOPs of one tile task. */
  double flops_per_tile() const { return 2.0 * config.bm * config.bn * static_cast<double>(k); }
  /** @brief Shared memory of the operand pipeline: stages · (bm + bn) · bk elements. */
  std::int64_t pipeline_bytes(int element_bytes) const {
    return static_cast<std::int64_t>(config.stages) * (config.bm + config.bn) * config.bk * element_bytes;
  }
};

/** @brief Row padding of an expert's tokens to whole tiles: ceil(tokens / bm) · bm. */
std::int64_t padded_rows(std::int64_t tokens, int bm);

/** @brief Tasks block `block` of a `blocks`-block grid runs when it takes block, block + blocks, ... */
std::int64_t tasks_of_block(std::int64_t tasks, std::int64_t blocks, std::int64_t block);

/** @brief Tasks of the busiest block: ceil(tasks / blocks), the number of waves. */
std::int64_t task_waves(std::int64_t tasks, std::int64_t blocks);

/**
 * @brief Processor time per tile task: seconds · blocks / tasks, in ns. With every block running
 * the same number of tasks it is one block's time per task; otherwise it includes the last wave's
 * idle blocks.
 */
double ns_per_task(double seconds, std::int64_t blocks, std::int64_t tasks);

}  // namespace moesim::kernels
