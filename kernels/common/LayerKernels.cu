#include <algorithm>

#include "GpuCheck.hpp"
#include "LayerKernels.hpp"

namespace moesim::kernels {
namespace {

constexpr int kVector = 8;  // bf16 values per 16-byte access
constexpr int kThreads = 256;

struct Bf16x8 {
  uint4 bits;
  __device__ float get(int i) const { return bf16_to_float(reinterpret_cast<const bf16_t*>(&bits)[i]); }
  __device__ void set(int i, float v) { reinterpret_cast<bf16_t*>(&bits)[i] = float_to_bf16(v); }
};

unsigned grid_for(std::size_t items) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, 65535u * 4));
}

__device__ float block_reduce(float value, bool is_max) {
  __shared__ float partial[32];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = is_max ? fmaxf(value, other) : value + other;
  }
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = value;
  __syncthreads();
  float total = is_max ? -INFINITY : 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x / warpSize); ++w) {
    total = is_max ? fmaxf(total, partial[w]) : total + partial[w];
  }
  __syncthreads();
  return total;
}

__global__ void rmsnorm_kernel(const uint4* x, const uint4* a, const uint4* b, const uint4* gamma, uint4* y,
                               int row_vectors, float epsilon) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * row_vectors;
  auto input = [&](int i) {
    Bf16x8 in{x[base + i]};
    if (a != nullptr || b != nullptr) {
      const Bf16x8 da{a != nullptr ? a[base + i] : uint4{}}, db{b != nullptr ? b[base + i] : uint4{}};
#pragma unroll
      for (int v = 0; v < kVector; ++v) in.set(v, in.get(v) + da.get(v) + db.get(v));
    }
    return in;
  };
  float squares = 0;
  for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
    const Bf16x8 in = input(i);
#pragma unroll
    for (int v = 0; v < kVector; ++v) squares += in.get(v) * in.get(v);
  }
  const float scale =
      rsqrtf(block_reduce(squares, false) / static_cast<float>(row_vectors * kVector) + epsilon);
  for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
    const Bf16x8 in = input(i), g{gamma[i]};
    Bf16x8 out{};
#pragma unroll
    for (int v = 0; v < kVector; ++v) out.set(v, in.get(v) * scale * g.get(v));
    y[base + i] = out.bits;
  }
}

// One block per row; a is the first F columns of a [rows, 2F] row, b the second.
__global__ void swiglu_kernel(const uint4* x, uint4* y, int ffn_vectors) {
  const uint4* row = x + static_cast<std::size_t>(blockIdx.x) * 2 * ffn_vectors;
  uint4* out_row = y + static_cast<std::size_t>(blockIdx.x) * ffn_vectors;
  for (int i = threadIdx.x; i < ffn_vectors; i += blockDim.x) {
    Bf16x8 a{row[i]}, b{row[ffn_vectors + i]}, out{};
#pragma unroll
    for (int v = 0; v < kVector; ++v) {
      const float gate = a.get(v);
      out.set(v, gate / (1.0f + expf(-gate)) * b.get(v));
    }
    out_row[i] = out.bits;
  }
}

__global__ void add_kernel(const uint4* x, const uint4* r, uint4* y, std::size_t vectors, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += stride) {
    Bf16x8 a{x[i]}, b{r[i]}, out{};
#pragma unroll
    for (int v = 0; v < kVector; ++v) out.set(v, a.get(v) + scale * b.get(v));
    y[i] = out.bits;
  }
}

__global__ void gather_rows_kernel(const uint4* x, const int* source_row, uint4* y, int row_vectors) {
  const uint4* in = x + static_cast<std::size_t>(source_row[blockIdx.x]) * row_vectors;
  uint4* out = y + static_cast<std::size_t>(blockIdx.x) * row_vectors;
  for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) out[i] = in[i];
}

__global__ void unpermute_kernel(const uint4* x, const int* position, const float* weight, const uint4* extra,
                                 uint4* y, int row_vectors, int top_k) {
  const std::size_t token = blockIdx.x;
  for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
    float sum[kVector] = {};
    if (extra != nullptr) {
      const Bf16x8 e{extra[token * row_vectors + i]};
#pragma unroll
      for (int v = 0; v < kVector; ++v) sum[v] = e.get(v);
    }
    for (int j = 0; j < top_k; ++j) {
      const int p = position[token * top_k + j];
      if (p < 0) continue;
      const Bf16x8 in{x[static_cast<std::size_t>(p) * row_vectors + i]};
      const float w = weight[token * top_k + j];
#pragma unroll
      for (int v = 0; v < kVector; ++v) sum[v] += w * in.get(v);
    }
    Bf16x8 out{};
#pragma unroll
    for (int v = 0; v < kVector; ++v) out.set(v, sum[v]);
    y[token * row_vectors + i] = out.bits;
  }
}

// One block per (head, query row); keys j > row are masked.
__global__ void causal_softmax_kernel(const float* scores, bf16_t* probabilities, int length) {
  const std::size_t row_index = blockIdx.x;
  const int row = static_cast<int>(row_index % static_cast<std::size_t>(length));
  const float* s = scores + row_index * length;
  bf16_t* p = probabilities + row_index * length;
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j <= row; j += blockDim.x) local_max = fmaxf(local_max, s[j]);
  const float row_max = block_reduce(local_max, true);
  float local_sum = 0;
  for (int j = threadIdx.x; j <= row; j += blockDim.x) local_sum += expf(s[j] - row_max);
  const float inverse = 1.0f / block_reduce(local_sum, false);
  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    p[j] = float_to_bf16(j <= row ? expf(s[j] - row_max) * inverse : 0.0f);
  }
}

// One warp per token; lane l holds experts l, l + warpSize, ... (at most kPerLane of them).
constexpr int kPerLane = kGateMaxExperts / 32;

__global__ void gate_topk_kernel(const bf16_t* logits, int* top_index, float* top_weight, int* counts,
                                 std::int64_t tokens, int experts, int top_k) {
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  const std::int64_t token =
      static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (token >= tokens) return;
  float value[kPerLane];
  float local_max = -INFINITY;
  for (int i = 0; i < kPerLane; ++i) {
    const int e = lane + i * warpSize;
    value[i] = e < experts ? bf16_to_float(logits[token * experts + e]) : -INFINITY;
    local_max = fmaxf(local_max, value[i]);
  }
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, offset));
  float chosen_sum = 0;
  int chosen = 0;
  for (int j = 0; j < top_k; ++j) {
    float best = -INFINITY;
    int best_expert = experts;
    for (int i = 0; i < kPerLane; ++i) {
      const int e = lane + i * warpSize;
      if (value[i] > best) {
        best = value[i];
        best_expert = e;
      }
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, best, offset);
      const int other_expert = __shfl_xor_sync(0xffffffffu, best_expert, offset);
      if (other > best || (other == best && other_expert < best_expert)) {
        best = other;
        best_expert = other_expert;
      }
    }
    if (best_expert >= experts) break;  // fewer finite logits than top_k
    if (best_expert % warpSize == lane) value[best_expert / warpSize] = -INFINITY;
    const float probability = expf(best - local_max);  // softmax numerator; the denominator cancels below
    chosen_sum += probability;
    ++chosen;
    if (lane == 0) {
      top_index[token * top_k + j] = best_expert;
      top_weight[token * top_k + j] = probability;
      atomicAdd(counts + best_expert, 1);
    }
  }
  if (lane == 0) {
    for (int j = 0; j < chosen; ++j) top_weight[token * top_k + j] /= chosen_sum;
  }
}

__global__ void split_heads_kernel(const uint4* qkv, uint4* q, uint4* k, uint4* v, std::int64_t batch,
                                   int seq, int heads, int group, int kv_heads, int dim_vectors) {
  const std::size_t total = static_cast<std::size_t>(batch) * heads * seq * dim_vectors;
  const std::size_t row_vectors = static_cast<std::size_t>(heads + 2 * kv_heads) * dim_vectors;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int vec = static_cast<int>(i % dim_vectors);
    const std::size_t head_row = i / dim_vectors;  // (b·H + h)·S + s
    const int s = static_cast<int>(head_row % seq);
    const std::size_t bh = head_row / seq;
    const int h = static_cast<int>(bh % heads);
    const std::size_t b = bh / heads;
    const uint4* row = qkv + (b * seq + s) * row_vectors;
    const int kv = h / group;
    q[i] = row[static_cast<std::size_t>(h) * dim_vectors + vec];
    k[i] = row[static_cast<std::size_t>(heads + kv) * dim_vectors + vec];
    v[i] = row[static_cast<std::size_t>(heads + kv_heads + kv) * dim_vectors + vec];
  }
}

__global__ void merge_heads_kernel(const uint4* o, uint4* out, std::int64_t batch, int seq, int heads,
                                   int dim_vectors) {
  const std::size_t total = static_cast<std::size_t>(batch) * seq * heads * dim_vectors;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int vec = static_cast<int>(i % dim_vectors);
    const int h = static_cast<int>((i / dim_vectors) % heads);
    const std::size_t token = i / (static_cast<std::size_t>(dim_vectors) * heads);  // b·S + s
    const std::size_t b = token / seq;
    const std::size_t s = token % seq;
    out[i] = o[((b * heads + h) * seq + s) * dim_vectors + vec];
  }
}

}  // namespace

void launch_rmsnorm(const bf16_t* x, const bf16_t* a, const bf16_t* b, const bf16_t* gamma, bf16_t* y,
                    std::int64_t rows, std::int64_t width, float epsilon, cudaStream_t stream) {
  if (rows == 0) return;
  rmsnorm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(x), reinterpret_cast<const uint4*>(a), reinterpret_cast<const uint4*>(b),
      reinterpret_cast<const uint4*>(gamma), reinterpret_cast<uint4*>(y), static_cast<int>(width / kVector),
      epsilon);
  CUDA_CHECK_LAUNCH();
}

void launch_swiglu(const bf16_t* x, bf16_t* y, std::int64_t rows, std::int64_t ffn, cudaStream_t stream) {
  if (rows == 0) return;
  swiglu_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(x), reinterpret_cast<uint4*>(y), static_cast<int>(ffn / kVector));
  CUDA_CHECK_LAUNCH();
}

void launch_add(const bf16_t* a, const bf16_t* b, bf16_t* y, std::size_t count, float scale,
                cudaStream_t stream) {
  const std::size_t vectors = count / kVector;
  if (vectors == 0) return;
  add_kernel<<<grid_for(vectors), kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(a),
                                                         reinterpret_cast<const uint4*>(b),
                                                         reinterpret_cast<uint4*>(y), vectors, scale);
  CUDA_CHECK_LAUNCH();
}

void launch_gather_rows(const bf16_t* x, const int* source_row, bf16_t* y, std::int64_t rows,
                        std::int64_t width, cudaStream_t stream) {
  if (rows == 0) return;
  gather_rows_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(x), source_row, reinterpret_cast<uint4*>(y),
      static_cast<int>(width / kVector));
  CUDA_CHECK_LAUNCH();
}

void launch_unpermute(const bf16_t* x, const int* position, const float* weight, const bf16_t* extra,
                      bf16_t* y, std::int64_t tokens, std::int64_t width, int top_k, cudaStream_t stream) {
  if (tokens == 0) return;
  unpermute_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(x), position, weight, reinterpret_cast<const uint4*>(extra),
      reinterpret_cast<uint4*>(y), static_cast<int>(width / kVector), top_k);
  CUDA_CHECK_LAUNCH();
}

void launch_causal_softmax(const float* scores, bf16_t* probabilities, std::int64_t rows, std::int64_t length,
                           cudaStream_t stream) {
  if (rows == 0) return;
  causal_softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(scores, probabilities,
                                                                              static_cast<int>(length));
  CUDA_CHECK_LAUNCH();
}

void launch_gate_topk(const bf16_t* logits, int* top_index, float* top_weight, int* counts,
                      std::int64_t tokens, int experts, int top_k, cudaStream_t stream) {
  if (tokens == 0) return;
  // Blocks are sized for 32-wide warps; with 64-wide warps (AMD) the surplus blocks find no token.
  const std::int64_t tokens_per_block = kThreads / 32;
  const auto blocks = static_cast<unsigned>((tokens + tokens_per_block - 1) / tokens_per_block);
  gate_topk_kernel<<<blocks, kThreads, 0, stream>>>(logits, top_index, top_weight, counts, tokens, experts,
                                                    top_k);
  CUDA_CHECK_LAUNCH();
}

void launch_split_heads(const bf16_t* qkv, bf16_t* q, bf16_t* k, bf16_t* v, std::int64_t batch,
                        std::int64_t seq, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                        cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(batch * heads * seq * head_dim / kVector);
  split_heads_kernel<<<grid_for(total), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(qkv), reinterpret_cast<uint4*>(q), reinterpret_cast<uint4*>(k),
      reinterpret_cast<uint4*>(v), batch, static_cast<int>(seq), static_cast<int>(heads),
      static_cast<int>(heads / kv_heads), static_cast<int>(kv_heads), static_cast<int>(head_dim / kVector));
  CUDA_CHECK_LAUNCH();
}

void launch_merge_heads(const bf16_t* o, bf16_t* out, std::int64_t batch, std::int64_t seq,
                        std::int64_t heads, std::int64_t head_dim, cudaStream_t stream) {
  const std::size_t total = static_cast<std::size_t>(batch * seq * heads * head_dim / kVector);
  merge_heads_kernel<<<grid_for(total), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(o), reinterpret_cast<uint4*>(out), batch, static_cast<int>(seq),
      static_cast<int>(heads), static_cast<int>(head_dim / kVector));
  CUDA_CHECK_LAUNCH();
}

}  // namespace moesim::kernels
