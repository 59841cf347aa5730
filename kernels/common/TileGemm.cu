#include "GpuCheck.hpp"
#include "TileGemm.hpp"

namespace moesim::kernels {
namespace {

// FlashMoE's Hopper block GEMM (TileGemmPlan.hpp): 128×64 output tile, bK 8, 4 stages, 128 threads.
constexpr int kBM = 128, kBN = 64, kBK = 8, kStages = 4, kThreads = 128;
// Four warps as 2×2, each owning a 64×32 quarter of the tile: 4×4 MMA atoms of 16×8 outputs, 64
// fp32 accumulators per thread (FlashMoE's MAX_REGS = BLOCK_M·BLOCK_N / THREADS).
constexpr int kWarpM = 64, kWarpN = 32, kAtomsM = kWarpM / 16, kAtomsN = kWarpN / 8;

// Shared memory holds 32-bit words: a stage row of bK elements is 8 words for tf32, 4 for bf16.
template <TileMath M>
constexpr int kWordsPerRow = M == TileMath::TF32 ? kBK : kBK / 2;

// Word index of (row, word) in a stage. tf32 rows are two 16-byte chunks; the chunk index is XORed
// with bit 2 of the row (FlashMoE swizzles too), so the eight rows one ldmatrix phase reads fall in
// eight different bank groups. bf16 rows are one chunk each: eight consecutive rows never conflict.
template <TileMath M>
__device__ __forceinline__ int smem_word(int row, int word) {
  if constexpr (M == TileMath::TF32) return row * 8 + ((((word >> 2) ^ (row >> 2)) & 1) << 2) + (word & 3);
  return row * kWordsPerRow<M> + word;
}

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// FlashMoE's global-to-shared copy atom: SM80_CP_ASYNC_CACHEALWAYS of one 32-bit value.
__device__ __forceinline__ void copy_word_async(std::uint32_t* shared, const std::uint32_t* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_address(shared)), "l"(global));
}

__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

__device__ __forceinline__ void load_matrices_x4(std::uint32_t (&r)[4], const std::uint32_t* shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared)));
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], std::uint32_t a0, std::uint32_t a1,
                                         std::uint32_t b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, "
      "%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

template <TileMath M>
struct alignas(16) Stages {  // ldmatrix reads 16-byte rows
  std::uint32_t a[kStages][kBM * kWordsPerRow<M>];
  std::uint32_t w[kStages][kBN * kWordsPerRow<M>];
};

// One stage: the tile's 128 rows of A and 64 rows of W over bK columns, one word per copy.
template <TileMath M>
__device__ __forceinline__ void load_stage(Stages<M>& s, int slot, const std::uint32_t* a,
                                           const std::uint32_t* w, std::int64_t row_words,
                                           std::int64_t k_word) {
  constexpr int kWords = kWordsPerRow<M>;
#pragma unroll
  for (int c = 0; c < kBM * kWords / kThreads; ++c) {
    const int i = threadIdx.x + c * kThreads, row = i / kWords, word = i % kWords;
    copy_word_async(&s.a[slot][smem_word<M>(row, word)], a + row * row_words + k_word + word);
  }
#pragma unroll
  for (int c = 0; c < kBN * kWords / kThreads; ++c) {
    const int i = threadIdx.x + c * kThreads, row = i / kWords, word = i % kWords;
    copy_word_async(&s.w[slot][smem_word<M>(row, word)], w + row * row_words + k_word + word);
  }
}

// One bK slab of the warp's 64×32 quarter: 16 MMAs.
template <TileMath M>
__device__ __forceinline__ void compute_stage(const Stages<M>& s, int slot, int warp_row, int warp_col,
                                              int lane, float (&acc)[kAtomsM][kAtomsN][4]) {
  if constexpr (M == TileMath::TF32) {
    // A atom (16×8 tf32): matrices rows 0-7 / 8-15 of chunk 0, then of chunk 1 = a0, a1, a2, a3.
    std::uint32_t a[kAtomsM][4];
#pragma unroll
    for (int i = 0; i < kAtomsM; ++i) {
      const int row = warp_row + i * 16 + (lane & 15);
      load_matrices_x4(a[i], &s.a[slot][smem_word<M>(row, (lane >> 4) * 4)]);
    }
    // Two W atoms (8×8 each, n × k): rows 0-7 chunk 0 / chunk 1, rows 8-15 chunk 0 / chunk 1.
    std::uint32_t b[kAtomsN / 2][4];
#pragma unroll
    for (int j = 0; j < kAtomsN / 2; ++j) {
      const int row = warp_col + j * 16 + (lane & 7) + ((lane >> 4) << 3);
      load_matrices_x4(b[j], &s.w[slot][smem_word<M>(row, ((lane >> 3) & 1) * 4)]);
    }
#pragma unroll
    for (int i = 0; i < kAtomsM; ++i)
#pragma unroll
      for (int j = 0; j < kAtomsN; ++j)
        mma_tf32(acc[i][j], a[i], b[j / 2][(j % 2) * 2], b[j / 2][(j % 2) * 2 + 1]);
  } else {
    // A: 32 rows per ldmatrix.x4 = two 16×8 atoms (a0 rows 0-7, a1 rows 8-15); W: 32 rows = four atoms.
    std::uint32_t a[kAtomsM / 2][4];
#pragma unroll
    for (int i = 0; i < kAtomsM / 2; ++i)
      load_matrices_x4(a[i], &s.a[slot][smem_word<M>(warp_row + i * 32 + lane, 0)]);
    std::uint32_t b[4];
    load_matrices_x4(b, &s.w[slot][smem_word<M>(warp_col + lane, 0)]);
#pragma unroll
    for (int i = 0; i < kAtomsM; ++i)
#pragma unroll
      for (int j = 0; j < kAtomsN; ++j)
        mma_bf16(acc[i][j], a[i / 2][(i % 2) * 2], a[i / 2][(i % 2) * 2 + 1], b[j]);
  }
}

// Accumulator (g = lane/4, t = lane%4): c0, c1 at (g, 2t), (g, 2t+1); c2, c3 eight rows below.
template <TileMath M>
__device__ __forceinline__ void store_tile(void* y, std::int64_t n, std::int64_t row0, std::int64_t col0,
                                           int lane, const float (&acc)[kAtomsM][kAtomsN][4]) {
#pragma unroll
  for (int i = 0; i < kAtomsM; ++i) {
#pragma unroll
    for (int j = 0; j < kAtomsN; ++j) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const std::int64_t row = row0 + i * 16 + (lane >> 2) + half * 8;
        const std::int64_t index = row * n + col0 + j * 8 + (lane & 3) * 2;
        const float x = acc[i][j][half * 2], z = acc[i][j][half * 2 + 1];
        if constexpr (M == TileMath::TF32) {
          *reinterpret_cast<float2*>(static_cast<float*>(y) + index) = make_float2(x, z);
        } else {
          *reinterpret_cast<__nv_bfloat162*>(static_cast<bf16_t*>(y) + index) = __floats2bfloat162_rn(x, z);
        }
      }
    }
  }
}

template <TileMath M>
__global__ void __launch_bounds__(kThreads) tile_gemm_kernel(TileGemmArgs args) {
  __shared__ Stages<M> s;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = (warp >> 1) * kWarpM, warp_col = (warp & 1) * kWarpN;
  const std::int64_t row_words = args.k * kWordsPerRow<M> / kBK;
  const int k_tiles = static_cast<int>(args.k / kBK);
  const std::int64_t tiles_n = args.n / kBN, tiles = args.m / kBM * tiles_n;
  const auto* a_words = static_cast<const std::uint32_t*>(args.a);
  const auto* w_words = static_cast<const std::uint32_t*>(args.w);
  for (std::int64_t task = blockIdx.x; task < args.task_count; task += gridDim.x) {
    const std::int64_t tile = task % tiles;
    const std::int64_t row0 = tile / tiles_n * kBM, col0 = tile % tiles_n * kBN;
    const std::uint32_t* a = a_words + row0 * row_words;
    const std::uint32_t* w = w_words + col0 * row_words;
    float acc[kAtomsM][kAtomsN][4] = {};
#pragma unroll
    for (int stage = 0; stage < kStages - 1; ++stage) {
      if (stage < k_tiles) load_stage<M>(s, stage, a, w, row_words, stage * kWordsPerRow<M>);
      commit_copies();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
      wait_copies<kStages - 2>();  // slab kt has landed (for every thread, after the barrier)
      __syncthreads();             // and every warp is done with slab kt - 1, whose slot is refilled now
      const int next = kt + kStages - 1;
      if (next < k_tiles) load_stage<M>(s, next % kStages, a, w, row_words, next * kWordsPerRow<M>);
      commit_copies();
      compute_stage<M>(s, kt % kStages, warp_row, warp_col, lane, acc);
    }
    wait_copies<0>();
    __syncthreads();  // the next task's prologue overwrites the slots
    store_tile<M>(args.y, args.n, row0 + warp_row, col0 + warp_col, lane, acc);
  }
}

__global__ void round_to_tf32_kernel(float* data, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t bits;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(data[i]));
    data[i] = __uint_as_float(bits);
  }
}

}  // namespace

const char* tile_math_name(TileMath math) {
  return math == TileMath::TF32 ? "tf32" : "bf16";
}

void launch_tile_gemm(TileMath math, const TileGemmArgs& args, int blocks, cudaStream_t stream) {
  if (math == TileMath::TF32) {
    tile_gemm_kernel<TileMath::TF32><<<blocks, kThreads, 0, stream>>>(args);
  } else {
    tile_gemm_kernel<TileMath::BF16><<<blocks, kThreads, 0, stream>>>(args);
  }
  CUDA_CHECK_LAUNCH();
}

int tile_gemm_blocks_per_sm(TileMath math) {
  int blocks = 0;
  if (math == TileMath::TF32) {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tile_gemm_kernel<TileMath::TF32>,
                                                             kThreads, 0));
  } else {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tile_gemm_kernel<TileMath::BF16>,
                                                             kThreads, 0));
  }
  return blocks;
}

void round_to_tf32(float* data, std::size_t count, cudaStream_t stream) {
  round_to_tf32_kernel<<<1024, 256, 0, stream>>>(data, count);
  CUDA_CHECK_LAUNCH();
}

}  // namespace moesim::kernels
