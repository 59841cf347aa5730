#pragma once
/**
 * @file A GEMM tile kernel built the way FlashMoE's processor blocks run theirs (CUDA, sm_80+).
 *
 * FlashMoE's block GEMM is CUTLASS's CollectiveMma with MainloopSm80CpAsyncUnpredicated<4> on a
 * 128×64×8 block tile, 128 threads as 2×2 warps, SM80 MMA atoms with fp32 accumulation (16×8×8 tf32
 * and 16×8×8 bf16), operands staged by 4-byte cp.async into swizzled shared memory and read with
 * ldmatrix (see moesim/kernels/TileGemmPlan.hpp for the source files). CUTLASS is not a Debian
 * package and nothing is vendored, so this is our own compact kernel doing the same: the same tile,
 * stages, threads, MMA instructions and copy width; no wgmma or TMA, no tuning beyond theirs.
 *
 * Y[M,N] = A[M,K]·W[N,K]ᵀ, all row-major (W is the weight layout of Y = X·Wᵀ, the "TN" product the
 * MMA atoms take). Each block loops over tasks blockIdx.x, blockIdx.x + gridDim.x, ... < task_count;
 * task t computes output tile t mod tiles (tiles row-major over M/128 × N/64), so a grid launched
 * with task_count = tiles is FlashMoE's persistent loop and a larger task_count repeats tiles.
 */
#include <cstddef>
#include <cstdint>

#include "gpu_runtime.hpp"

namespace moesim::kernels {

/** @brief Operand types: tf32 (fp32 storage holding tf32 values, fp32 out) or bf16 (bf16 out). */
enum class TileMath { TF32, BF16 };

/** @brief "tf32" or "bf16". */
const char* tile_math_name(TileMath math);

struct TileGemmArgs {
  const void* a = nullptr;  ///< [m, k]
  const void* w = nullptr;  ///< [n, k]
  void* y = nullptr;        ///< [m, n]
  std::int64_t m = 0;       ///< multiple of 128
  std::int64_t n = 0;       ///< multiple of 64
  std::int64_t k = 0;       ///< multiple of 8
  std::int64_t task_count = 0;
};

/** @brief Enqueues the kernel on `blocks` blocks of 128 threads. */
void launch_tile_gemm(TileMath math, const TileGemmArgs& args, int blocks, cudaStream_t stream);

/** @brief Blocks of the kernel one SM holds at once (registers and shared memory permitting). */
int tile_gemm_blocks_per_sm(TileMath math);

/**
 * @brief Rounds fp32 values to tf32 in place (round to nearest, ties away: cvt.rna.tf32.f32), as
 * FlashMoE's tfloat32_t operands hold them, so the fp64 reference sees exactly what the MMA reads.
 */
void round_to_tf32(float* data, std::size_t count, cudaStream_t stream);

}  // namespace moesim::kernels
