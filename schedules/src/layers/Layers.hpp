#pragma once
/**
 * @file The layer-by-layer op order of the regular and FarSkip families (one rank at a time). Each emitter
 * runs a contiguous range of the model's layers, so a pipeline stage can run its share of one micro-batch;
 * the whole stack is the range of every layer.
 */
#include <functional>
#include <vector>

#include "LayerModes.hpp"
#include "ProgramBuilder.hpp"

namespace moesim::schedules::detail {

/** @brief Layers [first, last) of the model. */
struct LayerRange {
  int first = 0;
  int last = 0;
};

/** @brief The range of every layer `modes` describes. */
LayerRange all_layers(const std::vector<LayerMode>& modes);

/**
 * @brief What the step around a range hooks into each layer (empty functions: nothing). before_forward(l)
 * runs before layer l's first forward op (ZeRO's parameter all-gather is waited for there); after_backward(l)
 * after its last backward op (its weight gradients are complete: a gradient bucket may be reduced).
 */
struct LayerHooks {
  std::function<void(int layer)> before_forward;
  std::function<void(int layer)> after_backward;
};

/**
 * @brief Attention's backward (output projection, core, qkv, norm), with sequence parallelism's gather of the
 * output gradient and scatter of the input gradient under attention TP.
 */
void attention_backward(ProgramBuilder& b, int l);
/** @brief A column-then-row parallel MLP (dense FFN, shared experts) between sequence parallelism's gather
 * and scatter (the next kernel waits for the scatter); the plain MLP without TP. */
void tensor_parallel_mlp(ProgramBuilder& b, int l, models::LayerOp op);
/** @brief Its backward. */
void tensor_parallel_mlp_backward(ProgramBuilder& b, int l, models::LayerOp op);
/** @brief Router gradients once Dispatch's gradient `dispatch_grad` is home (permute, gate, MLP norm). */
void router_backward(ProgramBuilder& b, int l, OpId dispatch_grad);

/** @brief Training forward with EP all-to-all (FarSkip paper §2.1 regular, §4.1 steps 1–8 converted). */
void alltoall_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, bool sync_splits,
                      LayerRange range, const LayerHooks& hooks = {});
/** @brief Training backward, layers in reverse (§4.1's reordering for converted layers). */
void alltoall_backward(ProgramBuilder& b, const std::vector<LayerMode>& modes, LayerRange range,
                       const LayerHooks& hooks = {});
/**
 * @brief vLLM-style prefill: TP attention + all-reduce, EP experts + all-reduce (§4.2 when converted);
 * `quantized`: each all-reduce is a quantize pass, the all-reduce of 1-byte elements and a dequantize pass.
 */
void allreduce_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, LayerRange range,
                       bool quantized, const LayerHooks& hooks = {});

}  // namespace moesim::schedules::detail
