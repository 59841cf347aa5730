#pragma once
/**
 * @file Causal self-attention forward behind one interface, so the layer runner can switch
 * implementations (`--attention`). Input is the fused QKV projection [B·S, (H + 2·KV)·d] (query
 * heads, then key heads, then value heads), output [B·S, H·d], both bf16.
 *
 *   unfused  the framework "math" path (attention_bench): split heads into [B·H, S, d] with GQA
 *            KV expansion, strided-batched cuBLASLt S = QKᵀ/√d (fp32), causal softmax → P (bf16),
 *            O = P·V, merge heads. Scores are materialized, in chunks of heads whose fp32 scores
 *            and bf16 probabilities fit in `score_budget_bytes`.
 */
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "DeviceBuffer.hpp"
#include "LtMatmul.hpp"

namespace moesim::kernels {

struct AttentionShape {
  std::int64_t batch = 1;  ///< sequences
  std::int64_t seq = 1;    ///< tokens per sequence
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t head_dim = 128;
};

class AttentionForward {
 public:
  virtual ~AttentionForward() = default;
  virtual std::string name() const = 0;
  /** @brief Enqueues out = attention(qkv) on `stream`; `workspace` holds LtMatmul::kWorkspaceBytes. */
  virtual void run(const bf16_t* qkv, bf16_t* out, void* workspace, cudaStream_t stream) = 0;
  /** @brief Device memory the implementation allocated (scratch), for the run's memory report. */
  virtual std::size_t scratch_bytes() const = 0;
};

/** @brief Names `make_attention` accepts. */
std::vector<std::string> attention_implementations();

/**
 * @brief Builds an implementation; its scratch is allocated once here and reused by every run().
 * @throws std::invalid_argument for an unknown name.
 */
std::unique_ptr<AttentionForward> make_attention(const std::string& name, const LtHandle& handle,
                                                 const AttentionShape& shape, int device,
                                                 std::size_t score_budget_bytes = std::size_t{2} << 30);

}  // namespace moesim::kernels
