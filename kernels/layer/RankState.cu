#include <cmath>

#include "DeviceFill.hpp"
#include "RankState.hpp"

namespace moesim::kernels::layer {
namespace {

DeviceBuffer zeroed(int device, std::size_t bytes, cudaStream_t stream) {
  DeviceBuffer buffer(device, std::max<std::size_t>(bytes, 16));
  CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, buffer.bytes(), stream));
  return buffer;
}

template <typename T>
DeviceBuffer uploaded(int device, const std::vector<T>& values) {
  DeviceBuffer buffer(device, std::max<std::size_t>(values.size() * sizeof(T), 16));
  if (!values.empty())
    CUDA_CHECK(cudaMemcpy(buffer.get(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

// Runs before the members are built: the cuBLASLt handle belongs to the device current at creation.
int make_current(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}

RankShape rank_shape(const RunConfig& c) {
  RankShape s;
  const LayerModel& m = c.model;
  s.tokens = c.tokens;
  s.hidden = m.hidden;
  s.experts = m.experts;
  s.local_experts = c.experts_per_rank();
  s.top_k = m.top_k;
  s.ffn = m.expert_ffn;
  s.head_dim = m.head_dim;
  const TensorSlice slice = slice_for_tp(m, c.tp(), c.model_file);
  s.heads = slice.heads;
  s.kv_heads = slice.kv_heads;
  s.shared_width = slice.shared_width;
  return s;
}

}  // namespace

RankState::RankState(const RunConfig& config, int rank_index, int device_index, PlanRef plan)
    : rank(rank_index), device(make_current(device_index)), shape(rank_shape(config)) {
  create_streams(config.gpus);
  workspace = DeviceBuffer(device, LtMatmul::kWorkspaceBytes);
  upload_routing(plan);
  allocate_activations(config);
  allocate_weights(config);
  AttentionShape a;
  a.batch = shape.tokens / config.seq;
  a.seq = config.seq;
  a.heads = shape.heads;
  a.kv_heads = shape.kv_heads;
  a.head_dim = shape.head_dim;
  attention = make_attention(config.attention, handle, a, device);
  CUDA_CHECK(
      cudaMallocHost(reinterpret_cast<void**>(&host_counts), static_cast<std::size_t>(shape.experts) * 4));
  CUDA_CHECK(cudaDeviceSynchronize());
}

RankState::~RankState() {
  (void)cudaSetDevice(device);
  (void)cudaDeviceSynchronize();
  if (host_counts != nullptr) (void)cudaFreeHost(host_counts);
  for (cudaEvent_t e : done) (void)cudaEventDestroy(e);
  for (cudaEvent_t e : sent) (void)cudaEventDestroy(e);
  for (cudaEvent_t e : copy_done) (void)cudaEventDestroy(e);
  for (cudaEvent_t e : {ready, fork}) (void)cudaEventDestroy(e);
  for (cudaStream_t s : copy) (void)cudaStreamDestroy(s);
  (void)cudaStreamDestroy(compute);
  (void)cudaStreamDestroy(comm);
}

void RankState::create_streams(int ranks) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking));
  auto event = [] {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  };
  ready = event();
  fork = event();
  for (int peer = 0; peer < ranks; ++peer) {
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    copy.push_back(s);
    copy_done.push_back(event());
  }
}

void RankState::upload_routing(PlanRef plan) {
  if (plan.alltoall != nullptr) {
    const AlltoallPlan& a = *plan.alltoall;
    rows.permuted = static_cast<std::int64_t>(a.permute_source.size());
    rows.received = a.recv_total;
    rows.expert_rows = a.expert_rows;
    rows.send_rows = a.send_rows;
    rows.send_offset = a.send_offset;
    rows.recv_rows = a.recv_rows;
    rows.recv_offset = a.recv_offset;
    permute_source = uploaded(device, a.permute_source);
    slot_position = uploaded(device, a.slot_position);
    slot_weight = uploaded(device, a.slot_weight);
    regroup_source = uploaded(device, a.regroup_source);
    ungroup_source = uploaded(device, a.ungroup_source);
    host_slot_weight = a.slot_weight;
  } else {
    const AllreducePlan& a = *plan.allreduce;
    rows.permuted = static_cast<std::int64_t>(a.permute_source.size());
    rows.received = rows.permuted;
    rows.expert_rows = a.expert_rows;
    permute_source = uploaded(device, a.permute_source);
    slot_position = uploaded(device, a.slot_position);
    slot_weight = uploaded(device, a.slot_weight);
    host_slot_weight = a.slot_weight;
  }
}

void RankState::allocate_activations(const RunConfig& config) {
  const auto T = static_cast<std::size_t>(shape.tokens), H = static_cast<std::size_t>(shape.hidden);
  const std::size_t row = H * 2, th = T * row;
  cudaStream_t s = compute;
  for (DeviceBuffer* b :
       {&x, &p, &normed, &attn_out, &shared_out, &moe_out, &acc, &scratch, &pb[0], &pb[1], &r[0], &r[1]})
    *b = zeroed(device, th, s);
  qkv = zeroed(device, T * static_cast<std::size_t>(shape.qkv_width()) * 2, s);
  heads = zeroed(device, T * static_cast<std::size_t>(shape.attn_width()) * 2, s);
  shared_up = zeroed(device, T * static_cast<std::size_t>(shape.shared_width) * 4, s);
  shared_act = zeroed(device, T * static_cast<std::size_t>(shape.shared_width) * 2, s);
  const auto E = static_cast<std::size_t>(shape.experts), k = static_cast<std::size_t>(shape.top_k);
  logits = zeroed(device, T * E * 2, s);
  top_index = zeroed(device, T * k * 4, s);
  top_weight = zeroed(device, T * k * 4, s);
  counts = zeroed(device, E * 4, s);
  const auto permuted = static_cast<std::size_t>(rows.permuted),
             received = static_cast<std::size_t>(rows.received);
  const auto F = static_cast<std::size_t>(shape.ffn);
  // Compute-only runs copy "received" bytes out of the send buffers, so those hold both counts.
  send = zeroed(device, std::max(permuted, received) * row, s);
  expert_in = zeroed(device, received * row, s);
  expert_up = zeroed(device, received * F * 4, s);
  expert_act = zeroed(device, received * F * 2, s);
  expert_out = zeroed(device, received * row, s);
  if (config.comm == MoeComm::ALLTOALL) {
    combine_send = zeroed(device, std::max(permuted, received) * row, s);
    bool copy_engine = false;
    for (ScheduleKind kind : config.schedules) copy_engine = copy_engine || kind == ScheduleKind::FARSKIP_CE;
    // Copy-engine receives need a distinct buffer per (layer, collective): only "sent" is signalled.
    const int sets = copy_engine ? config.layers : 1;
    for (int l = 0; l < sets; ++l) {
      dispatch_recv.push_back(zeroed(device, received * row, s));
      combine_recv.push_back(zeroed(device, permuted * row, s));
    }
  }
  auto event = [] {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  };
  for (int i = 0; i < 4 * config.layers; ++i) {
    done.push_back(event());
    sent.push_back(event());
  }
}

// Uniform in ±sqrt(3/fan_in): unit-variance inputs give unit-variance outputs, so L layers stay finite.
void RankState::allocate_weights(const RunConfig& config) {
  const std::int64_t H = shape.hidden, F = shape.ffn, Sw = shape.shared_width, El = shape.local_experts;
  struct Part {
    bf16_t** target;
    std::int64_t count;
    std::int64_t fan_in;  // 0: a norm weight, filled with 1
  };
  for (int l = 0; l < config.layers; ++l) {
    LayerWeights w;
    const std::vector<Part> parts = {{&w.attn_gamma, H, 0},
                                     {&w.mlp_gamma, H, 0},
                                     {&w.qkv, shape.qkv_width() * H, H},
                                     {&w.out, H * shape.attn_width(), shape.attn_width()},
                                     {&w.gate, shape.experts * H, H},
                                     {&w.expert_up, El * 2 * F * H, H},
                                     {&w.expert_down, El * H * F, F},
                                     {&w.shared_up, 2 * Sw * H, H},
                                     {&w.shared_down, H * Sw, std::max<std::int64_t>(Sw, 1)}};
    std::int64_t total = 0;
    for (const Part& part : parts) total += part.count;
    w.block = DeviceBuffer(device, static_cast<std::size_t>(total) * 2);
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Part& part = parts[i];
      *part.target = w.block.as<bf16_t>() + offset;
      const auto count = static_cast<std::size_t>(part.count);
      if (part.fan_in == 0) {
        fill_constant(*part.target, DataType::BF16, count, 1.0f, compute);
      } else if (count > 0) {
        const std::uint64_t seed = config.seed * 1000003u + static_cast<std::uint64_t>(rank) * 1009u +
                                   static_cast<std::uint64_t>(l) * 31u + i;
        fill_random(*part.target, DataType::BF16, count, seed,
                    std::sqrt(3.0f / static_cast<float>(part.fan_in)), compute);
      }
      offset += part.count;
    }
    weights.push_back(std::move(w));
  }
  fill_random(x.get(), DataType::BF16, static_cast<std::size_t>(shape.tokens * H),
              config.seed + (config.comm == MoeComm::ALLTOALL ? 77u * static_cast<unsigned>(rank) : 0u), 1.0f,
              compute);
}

}  // namespace moesim::kernels::layer
