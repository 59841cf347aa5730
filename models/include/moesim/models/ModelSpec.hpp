#pragma once
/**
 * @file The architecture of a transformer MoE model as read from `models/specs/<name>.json`, and
 * its loader.
 *
 * A spec is validated when it is loaded: unknown keys, wrong types and impossible shapes throw
 * ConfigError naming the file and the JSON pointer, e.g.
 * `models/specs/x.json: /moe/top_k = 9: must be <= /moe/experts (8)`.
 */
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace moesim::models {

/** @brief How attention projects keys and values. */
enum class AttentionType {
  MHA,  ///< Multi-head attention: one key/value head per query head.
  GQA,  ///< Grouped-query attention: heads / kv_heads query heads share one key/value head.
  MLA,  ///< DeepSeek multi-head latent attention: keys/values decompressed from a low-rank latent.
};

/** @brief Which keys a query attends to besides being causal. */
enum class AttentionWindow {
  FULL,     ///< Every earlier position of its sequence.
  SLIDING,  ///< The last `window_tokens` positions, itself included (Mistral, GPT-OSS `sliding_window`).
  CHUNKED,  ///< The earlier positions of its own chunk of `window_tokens` (Llama 4 `attention_chunk_size`).
};

/** @brief Attention block dimensions. The MLA-only fields are 0 for MHA and GQA. */
struct AttentionSpec {
  /** @brief Projection family; decides which fields apply. */
  AttentionType type = AttentionType::MHA;
  /** @brief Query heads. */
  int heads = 0;
  /** @brief Key/value heads (== heads for MHA and MLA, a divisor of heads for GQA). */
  int kv_heads = 0;
  /** @brief Per-head query/key width; for MLA the non-rotary part (HF `qk_nope_head_dim`). */
  int head_dim = 0;
  /** @brief MLA: width of the compressed key/value latent (HF `kv_lora_rank`). */
  int kv_lora_rank = 0;
  /** @brief MLA: width of the compressed query latent; 0 projects queries directly (DeepSeek-V2-Lite). */
  int q_lora_rank = 0;
  /** @brief MLA: per-head rotary part of queries/keys, shared by all heads for keys (HF `qk_rope_head_dim`).
   */
  int rope_head_dim = 0;
  /** @brief MLA: per-head value width. */
  int v_head_dim = 0;
  /** @brief Queries and keys RMS-normalized per head before RoPE (Qwen3's q_norm/k_norm); implementation
   * profiles charge its kernels (steps `when: qk_norm`), the fused runner has none. */
  bool qk_norm = false;
  /** @brief Local attention of the windowed layers (FULL: every layer attends to its whole prefix). */
  AttentionWindow window = AttentionWindow::FULL;
  /** @brief SLIDING: keys per query; CHUNKED: chunk length. 0 with FULL. */
  int window_tokens = 0;
  /**
   * @brief Layers that keep full attention among windowed ones: 0-based layer i is full iff
   * (i + 1) % full_every == 0 (GPT-OSS alternates, 2; Llama 4's NoPE layers, 4). 0: every layer windowed.
   */
  int full_every = 0;

  /** @brief Whether 0-based `layer` attends through the window (false for FULL models). */
  bool windowed_layer(int layer) const;
  /** @brief Width of one query/key head as attention sees it: head_dim (+ rope_head_dim for MLA). */
  int qk_head_dim() const;
  /** @brief Width of one value head: v_head_dim for MLA, head_dim otherwise. */
  int value_head_dim() const;
};

/** @brief The MoE feed-forward block of an MoE layer. */
struct MoeSpec {
  /** @brief Routed experts per MoE layer. */
  int experts = 0;
  /** @brief Routed experts each token is sent to. */
  int top_k = 0;
  /** @brief Intermediate width of one routed expert (HF `moe_intermediate_size`). */
  int expert_ffn = 0;
  /** @brief Always-active shared experts per MoE layer (0 if none). */
  int shared_experts = 0;
  /** @brief Intermediate width of one shared expert. */
  int shared_ffn = 0;
  /** @brief The shared experts' output scaled per token by a sigmoid of a 1-wide projection of the input
   * (Qwen2-MoE's and Qwen3-Next's `shared_expert_gate`); implementation profiles charge its kernels (steps
   * `when: shared_gate`), the fused runner has none. */
  bool shared_gate = false;
};

/** @brief Non-linearity of every feed-forward block (dense, routed and shared experts). */
enum class Activation {
  SWIGLU,  ///< Gated: fc1 produces 2·ffn columns (gate and up), fc2 reads ffn.
  GELU,    ///< Plain: fc1 produces ffn columns.
};

/** @brief Normalization layer before each sub-block. */
enum class NormType {
  RMSNORM,    ///< Root-mean-square norm (scale only).
  LAYERNORM,  ///< Layer norm (mean, variance, scale, shift).
};

/** @brief A whole model: decoder layers, each attention followed by a dense FFN or an MoE block. */
struct ModelSpec {
  /** @brief Model name; for shipped specs equal to the file stem. */
  std::string name;
  /** @brief Decoder layers. */
  int layers = 0;
  /** @brief Leading layers that use a dense FFN instead of MoE (DeepSeek `first_k_dense_replace`). */
  int dense_layers = 0;
  /**
   * @brief After the dense layers, one layer in every `moe_every` is an MoE layer: the last of each
   * group of moe_every consecutive layers. 1 means all of them; 2 gives dense, MoE, dense, MoE…
   * (GShard's and FoldMoE's "every other layer"; fairseq's `(i + 1) % moe_freq == 0`).
   */
  int moe_every = 1;
  /** @brief Model (residual stream) width. */
  int hidden = 0;
  /** @brief Vocabulary size (input embedding and output head, not tied). */
  int vocab = 0;
  /** @brief Attention block. */
  AttentionSpec attention;
  /** @brief MoE block of the MoE layers. */
  MoeSpec moe;
  /** @brief Intermediate width of the dense FFN of non-MoE layers (0 when the model has none). */
  int dense_ffn = 0;
  /** @brief Feed-forward non-linearity. */
  Activation activation = Activation::SWIGLU;
  /** @brief Normalization type. */
  NormType norm = NormType::RMSNORM;
  /** @brief Where the numbers come from (HF config.json of a release, or paper and table). */
  std::string source;
  /** @brief File the spec was read from ("" when built in memory). */
  std::string file;

  /**
   * @brief Whether 0-based `layer` has an MoE block. Layers [0, dense_layers) are dense; after them
   * layer i is MoE iff (i - dense_layers) % moe_every == moe_every - 1.
   */
  bool is_moe_layer(int layer) const;
  /** @brief Number of layers for which is_moe_layer() holds. */
  int moe_layer_count() const;
};

/** @brief Reads, checks and returns the spec in `path`. @throws ConfigError naming path and JSON pointer. */
ModelSpec load_model_file(const std::string& path);

/**
 * @brief Loads `name_or_path`: a file if it exists or ends in `.json`, otherwise the shipped spec
 * `<data dir>/models/specs/<name>.json`. The data dir is the MOESIM_DATA_DIR environment variable if
 * set, else the source tree the library was built from.
 * @throws ConfigError (pointer "--model") listing the shipped names when the name is unknown.
 */
ModelSpec load_model(const std::string& name_or_path);

/** @brief Builds a spec from parsed JSON; `file` only labels error messages. @throws ConfigError. */
ModelSpec model_from_json(const nlohmann::json& document, const std::string& file);

/** @brief Names of the specs shipped in `<data dir>/models/specs/`, sorted. */
std::vector<std::string> shipped_model_names();

/** @brief Spelling used in spec files: "mha", "gqa", "mla". */
std::string to_string(AttentionType type);
/** @brief Spelling used in spec files: "swiglu", "gelu". */
std::string to_string(Activation activation);
/** @brief Spelling used in spec files: "rmsnorm", "layernorm". */
std::string to_string(NormType norm);

}  // namespace moesim::models
