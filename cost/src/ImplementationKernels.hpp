#pragma once
/** @file The pieces of one op as an implementation profile's entry describes them. */
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/cost/OpKernels.hpp"

namespace moesim::cost::detail {

/**
 * @brief `entry`'s steps for `op` in `pass` (FORWARD, or DGRAD for the whole backward) with `context`:
 * PER_EXPERT runs repeated for every local expert with rows, steps for multi-rank groups dropped at EP 1,
 * GEMM and attention steps timed as moesim's kernels of the op scaled by the step's factor, MEMORY steps by
 * their bytes.
 */
std::vector<KernelPiece> implementation_kernels(const OpCostInputs& in, const ImplOpEntry& entry,
                                                models::LayerOp op, models::Pass pass,
                                                const models::OpContext& context);

}  // namespace moesim::cost::detail
