#pragma once
/**
 * @file Everything one GPU holds for a configuration: streams, events, cuBLASLt handle, the
 * weights of every layer, activations, routing index arrays and the receive buffers. Allocated
 * once per configuration and freed with it; zero-filled, so compute-only runs (whose "received"
 * rows are stand-in bytes) stay finite.
 */
#include <memory>
#include <vector>

#include "AttentionForward.hpp"
#include "DeviceBuffer.hpp"
#include "LtMatmul.hpp"
#include "RunConfig.hpp"

namespace moesim::kernels::layer {

/** @brief Weights of one layer on one rank (sub-ranges of one allocation). */
struct LayerWeights {
  DeviceBuffer block;
  bf16_t* attn_gamma = nullptr;
  bf16_t* mlp_gamma = nullptr;
  bf16_t* qkv = nullptr;          ///< [qkv_width_local, H]
  bf16_t* out = nullptr;          ///< [H, heads_local·d]
  bf16_t* gate = nullptr;         ///< [E, H]
  bf16_t* expert_up = nullptr;    ///< local experts × [2F, H]
  bf16_t* expert_down = nullptr;  ///< local experts × [H, F]
  bf16_t* shared_up = nullptr;    ///< [2·Sw_local, H]
  bf16_t* shared_down = nullptr;  ///< [H, Sw_local]
};

/** @brief Row bookkeeping of this rank (host copy), from the routing plans. */
struct RankRows {
  std::int64_t permuted = 0;  ///< rows PERMUTE writes (T·k, or the local slots in allreduce mode)
  std::int64_t received = 0;  ///< rows the routed experts see
  std::vector<std::int64_t> expert_rows;
  std::vector<std::int64_t> send_rows, send_offset, recv_rows, recv_offset;  ///< alltoall
};

/** @brief Shapes of this rank's slice. */
struct RankShape {
  std::int64_t tokens = 0, hidden = 0, experts = 0, local_experts = 0, top_k = 0, ffn = 0;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0, shared_width = 0;
  std::int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
  std::int64_t attn_width() const { return heads * head_dim; }
};

/** @brief This rank's routing plan: exactly one of the two is set, by the MoE communication mode. */
struct PlanRef {
  const AlltoallPlan* alltoall = nullptr;
  const AllreducePlan* allreduce = nullptr;
};

class RankState {
 public:
  RankState(const RunConfig& config, int rank, int device, PlanRef plan);
  ~RankState();
  RankState(const RankState&) = delete;
  RankState& operator=(const RankState&) = delete;

  int rank = 0;
  int device = 0;
  RankShape shape;
  RankRows rows;
  cudaStream_t compute = nullptr;
  cudaStream_t comm = nullptr;
  std::vector<cudaStream_t> copy;       ///< one per destination (copy-engine all-to-all)
  cudaEvent_t ready = nullptr;          ///< compute → comm before each collective
  cudaEvent_t fork = nullptr;           ///< comm → copy streams
  std::vector<cudaEvent_t> copy_done;   ///< per copy stream
  std::vector<cudaEvent_t> done, sent;  ///< per (layer, collective), see Transport
  LtHandle handle;
  DeviceBuffer workspace;
  std::unique_ptr<AttentionForward> attention;
  std::vector<LayerWeights> weights;

  // Activations [T, H] unless noted (see LayerOps.cu for who reads and writes what).
  DeviceBuffer x, p, normed, attn_out, shared_out, moe_out, acc, scratch, pb[2], r[2];
  DeviceBuffer qkv, heads, shared_up, shared_act, logits, top_index, top_weight, counts;
  DeviceBuffer send, expert_in, expert_up, expert_act, expert_out, combine_send;
  std::vector<DeviceBuffer> dispatch_recv, combine_recv;  ///< one, or one per layer (copy engine)
  DeviceBuffer permute_source, slot_position, slot_weight, regroup_source, ungroup_source;
  int* host_counts = nullptr;           ///< pinned, E values (split sizes for the host sync)
  std::vector<float> host_slot_weight;  ///< for the identity check

 private:
  void allocate_activations(const RunConfig& config);
  void allocate_weights(const RunConfig& config);
  void upload_routing(PlanRef plan);
  void create_streams(int ranks);
};

/** @brief Index of (layer, collective) in RankState::done / sent. */
inline std::size_t event_index(int layer, Comm comm) {
  return static_cast<std::size_t>(layer) * 4 + static_cast<std::size_t>(comm);
}

}  // namespace moesim::kernels::layer
