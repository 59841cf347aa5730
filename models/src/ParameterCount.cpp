#include "moesim/models/ParameterCount.hpp"

namespace moesim::models {

std::int64_t attention_parameters(const ModelSpec& spec) {
  const AttentionSpec& a = spec.attention;
  const std::int64_t hidden = spec.hidden;
  const std::int64_t output = std::int64_t{a.heads} * a.value_head_dim() * hidden;
  if (a.type != AttentionType::MLA) {
    return hidden * (std::int64_t{a.heads} + 2 * a.kv_heads) * a.head_dim + output;
  }
  const std::int64_t query_width = std::int64_t{a.heads} * a.qk_head_dim();
  // q_lora_rank 0: one direct projection; otherwise down-projection, latent norm, up-projection.
  const std::int64_t query =
      a.q_lora_rank == 0 ? hidden * query_width
                         : hidden * a.q_lora_rank + a.q_lora_rank + std::int64_t{a.q_lora_rank} * query_width;
  const std::int64_t kv_down = hidden * (a.kv_lora_rank + a.rope_head_dim) + a.kv_lora_rank;
  const std::int64_t kv_up = std::int64_t{a.kv_lora_rank} * a.heads * (a.head_dim + a.v_head_dim);
  return query + kv_down + kv_up + output;
}

std::int64_t mlp_parameters(const ModelSpec& spec, std::int64_t ffn) {
  const std::int64_t matrices = spec.activation == Activation::SWIGLU ? 3 : 2;
  return matrices * spec.hidden * ffn;
}

std::int64_t total_parameters(const ModelSpec& spec) {
  const std::int64_t hidden = spec.hidden;
  const MoeSpec& moe = spec.moe;
  const std::int64_t moe_block = moe.experts * mlp_parameters(spec, moe.expert_ffn) +
                                 moe.shared_experts * mlp_parameters(spec, moe.shared_ffn) +
                                 hidden * moe.experts + (moe.shared_gate ? hidden : 0);
  const std::int64_t dense_block = mlp_parameters(spec, spec.dense_ffn);
  const std::int64_t per_layer_common = attention_parameters(spec) + 2 * hidden;  // + two pre-norms
  const std::int64_t moe_layers = spec.moe_layer_count();
  const std::int64_t dense_layers = spec.layers - moe_layers;
  const std::int64_t embeddings = 2 * std::int64_t{spec.vocab} * hidden;
  return embeddings + hidden + spec.layers * per_layer_common + moe_layers * moe_block +
         dense_layers * dense_block;
}

}  // namespace moesim::models
