#pragma once
/**
 * @file Op -> kernels -> time: the kernels one sub-block of a layer launches on one rank, each with its
 * engine work and host launch cost. Schedules place what this returns; they never time a kernel.
 */
#include <vector>

#include "moesim/cost/CostModel.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/LayerOps.hpp"
#include "moesim/models/ModelSpec.hpp"

namespace moesim::cost {

/** @brief What decides how an op's kernels run, beside the op and its context. */
struct OpCostInputs {
  const hw::HwProfile& hw;
  const models::ModelSpec& model;
  /** forward attention as one fused kernel or as QK^T, softmax and PV kernels (unfused_attention_pieces) */
  hw::AttentionImpl attention = hw::AttentionImpl::FUSED;
};

/**
 * @brief The kernels `op` launches in `pass` with `context`, in launch order (models::layer_op_kernels),
 * timed on the profile. The FLOPs of an op split into several pieces are counted on its first piece.
 */
std::vector<KernelPiece> op_kernels(const OpCostInputs& in, models::LayerOp op, models::Pass pass,
                                    const models::OpContext& context);

}  // namespace moesim::cost
