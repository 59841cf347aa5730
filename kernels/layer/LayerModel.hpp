#pragma once
/**
 * @file The part of a moesim model file (models/specs/NAME.json) that the layer runner builds: one
 * MoE transformer layer with GQA attention, SwiGLU experts and RMSNorm. Other keys of the file
 * (layers, vocab, dense_ffn, source, ...) are accepted and ignored, so the runner reads the very
 * files the simulator reads.
 */
#include <cstdint>
#include <stdexcept>
#include <string>

namespace moesim::kernels::layer {

/** @brief A model file the runner cannot build; what() is one line "path: problem". */
class ModelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** @brief Shapes of one MoE layer. */
struct LayerModel {
  std::string name;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_ffn = 0;
  std::int64_t shared_experts = 0;
  std::int64_t shared_ffn = 0;  ///< per shared expert

  /** @brief Columns of the fused QKV projection: (heads + 2·kv_heads)·head_dim. */
  std::int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
  /** @brief Total shared-expert FFN width S·Fs (the shared experts run as one wide MLP). */
  std::int64_t shared_width() const { return shared_experts * shared_ffn; }
};

/** @brief Largest expert count the gate's top-k kernel handles (16 values per lane of a 32-wide warp). */
inline constexpr std::int64_t kMaxExperts = 512;

/**
 * @brief Reads a model from JSON text. Refuses attention.type "mla", activations other than
 * "swiglu", norms other than "rmsnorm", and shapes the kernels cannot run (widths not a multiple of
 * 8 bf16 values, top_k > experts, more than kMaxExperts experts).
 * @throws ModelFileError "path: problem" (JSON syntax errors carry line and column).
 */
LayerModel parse_layer_model(const std::string& text, const std::string& path);

/** @brief Reads and parses a model file. @throws ModelFileError */
LayerModel load_layer_model(const std::string& path);

/** @brief Per-rank shapes under tensor parallelism over `tp` ranks (allreduce mode; tp = 1: all). */
struct TensorSlice {
  std::int64_t heads = 0;     ///< query heads on this rank
  std::int64_t kv_heads = 0;  ///< KV heads on this rank (replicated when kv_heads < tp)
  std::int64_t shared_width = 0;
};

/** @brief Slices the model over `tp` ranks. @throws ModelFileError naming the shape that does not divide. */
TensorSlice slice_for_tp(const LayerModel& model, int tp, const std::string& path);

/** @brief Checks that `ep` ranks can hold the experts contiguously. @throws ModelFileError */
void check_expert_parallel(const LayerModel& model, int ep, const std::string& path);

}  // namespace moesim::kernels::layer
