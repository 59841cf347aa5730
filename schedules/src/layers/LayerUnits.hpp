#pragma once
/**
 * @file Regular all-to-all layers cut into units at their all-to-alls, so two chunks can run interleaved on
 * one rank: each unit is compute that ends by launching an all-to-all a later unit of the same chunk waits
 * for, and the other chunk's next unit runs meanwhile (two-batch overlap, DualPipe's forward-backward pairs).
 *
 *   forward, layer l   A: [unpermute(C[l-1]) add] norm qkv core out add norm gate permute ─► D
 *                      B: routed(D) ─► C, shared
 *   decode (5 stages): A0: [tail] norm qkv   A1: core out add norm gate permute ─► D
 *                      A2: shared            A3: routed(D) ─► C
 *   backward, layer l  (prologue: unpermute' ─► CB[top])
 *                      B1: shared' routed'(CB) ─► DB     B2: router'(DB) attention' [unpermute'[l-1] ─► CB]
 *
 * Units never leave waits pending in the builder (the other chunk's kernel would inherit them): every wait is
 * an explicit dependency of the kernel that needs it.
 */
#include <functional>
#include <memory>
#include <vector>

#include "step/Chunks.hpp"

namespace moesim::schedules::detail {

/** @brief Where a chunk's forward layers are cut. */
enum class UnitSplit {
  ATTENTION_MLP,  ///< attention with routing | MoE (prefill and training; SGLang's attn | dispatch | mlp |
                  ///< combine)
  DECODE,         ///< DeepSeek's decode: attention in two parts, shared experts apart from routed (5 stages)
};

/** @brief One chunk as units; step() emits the next. */
class UnitStream {
 public:
  /** `stack_layers`: the layers of the whole stack; a chunk at its start or end also runs the model's own ops
   * there (ProgramBuilder::model_op). */
  UnitStream(const models::ModelSpec& model, const ChunkCall& call, const LayerHooks& hooks, bool sync_splits,
             UnitSplit split, int stack_layers);
  bool done() const { return next_ >= units_.size(); }
  /** @brief A backward chunk starts with a unit (its first Combine gradient) that should run before the
   * other. */
  bool has_prologue() const { return prologue_; }
  /** @brief Emits the next unit, its ops tagged with this chunk's micro-batch. */
  void step(ProgramBuilder& b);
  /** @brief What the chunk produced: its last kernel (valid once done). */
  std::vector<OpId> outputs() const;

 private:
  void forward_units(const models::ModelSpec& model, bool sync_splits, UnitSplit split, int stack_layers);
  void backward_units(const models::ModelSpec& model, int stack_layers);

  ChunkCall call_;
  LayerHooks hooks_;
  std::vector<std::function<void(ProgramBuilder&)>> units_;
  std::size_t next_ = 0;
  bool prologue_ = false;
  /** State the units share. */
  struct State {
    std::vector<OpId> entry;  ///< the first kernel's inputs
    OpId combine = NO_OP;     ///< the Combine (or its gradient) a later unit waits for
    OpId dispatch = NO_OP;    ///< the Dispatch (or its gradient) a later unit waits for
    OpId scattered = NO_OP;   ///< a TP MLP's reduce-scatter the next tail or attention waits for
    int combine_layer = -1;
    OpId last = NO_OP;  ///< this chunk's last kernel
  };
  std::shared_ptr<State> state_;
};

/**
 * @brief Runs two chunks' units alternately (a backward chunk's prologue first), then what is left of either:
 * one's compute runs while the other's all-to-all is in flight.
 */
PairOutputs interleave(ProgramBuilder& b, UnitStream& first, UnitStream& second);

}  // namespace moesim::schedules::detail
