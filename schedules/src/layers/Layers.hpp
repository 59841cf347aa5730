#pragma once
/** @file The layer-by-layer op order of the regular and FarSkip families (one rank at a time). */
#include <vector>

#include "LayerModes.hpp"
#include "ProgramBuilder.hpp"

namespace moesim::schedules::detail {

/** @brief Training forward with EP all-to-all (FarSkip paper §2.1 regular, §4.1 steps 1–8 converted). */
void alltoall_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, bool sync_splits);
/** @brief Training backward, layers in reverse (§4.1's reordering for converted layers). */
void alltoall_backward(ProgramBuilder& b, const std::vector<LayerMode>& modes);
/**
 * @brief vLLM-style prefill: TP attention + all-reduce, EP experts + all-reduce (§4.2 when converted);
 * `quantized`: each all-reduce is a quantize pass, the all-reduce of 1-byte elements and a dequantize pass.
 */
void allreduce_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, bool quantized);

}  // namespace moesim::schedules::detail
