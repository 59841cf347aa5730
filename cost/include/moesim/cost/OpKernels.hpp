#pragma once
/**
 * @file Op -> kernels -> time: the kernels one sub-block of a layer launches on one rank, each with its
 * engine work and host launch cost. Schedules place what this returns; they never time a kernel.
 */
#include <vector>

#include "moesim/cost/CostModel.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
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
  /** how the software stack runs each op; nullptr or fused: the in-tree runner's kernels */
  const ImplementationProfile* impl = nullptr;
  /** ranks of the EP group (an implementation's split-size exchange runs only with more than one) */
  int ep = 1;
};

/**
 * @brief The kernels `op` launches in `pass` with `context`, in launch order, timed on the profile: the
 * implementation profile's steps where it has an entry for the op (host syncs among them; a backward entry is
 * emitted whole with DGRAD and WGRAD is empty), models::layer_op_kernels otherwise. The FLOPs of an op split
 * into several pieces are counted on its first piece.
 */
std::vector<KernelPiece> op_kernels(const OpCostInputs& in, models::LayerOp op, models::Pass pass,
                                    const models::OpContext& context);

}  // namespace moesim::cost
