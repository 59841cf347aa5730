#pragma once
/**
 * @file What an implementation profile's steps scale with, at one op's context: the rows and widths a MEMORY
 * step's traffic is the product of, and moesim's own kernels of the op that GEMM and ATTENTION steps scale.
 * The simulator evaluates a profile with these and `moesim calibrate --impl-out` learns one with them, so a
 * learned step means at simulation what it meant when it was fitted.
 */
#include <cstdint>
#include <optional>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/models/LayerOps.hpp"

namespace moesim::cost {

/** @brief Rows per local expert: the context's expert_tokens, or routed_rows spread evenly over the experts.
 */
std::vector<std::int64_t> implementation_expert_rows(const models::OpContext& context);

/** @brief `rows` at `context`; EXPERT_ROWS is `expert_rows` (the expert of a PER_EXPERT iteration). */
double implementation_rows(const models::OpContext& context, ImplRows rows, std::int64_t expert_rows);

/** @brief `width` of `model` at `context` (head widths are the local heads of attention TP). */
double implementation_width(const models::ModelSpec& model, const models::OpContext& context,
                            ImplWidth width);

/**
 * @brief moesim's kernels of `op` in `pass` (FORWARD, or DGRAD for the whole backward: DGRAD then WGRAD):
 * with `one_expert_rows`, ROUTED_EXPERTS as one expert of that many rows (an implementation that loops over
 * experts), else the routed experts as one grouped launch per projection.
 */
std::vector<models::KernelCost> implementation_moesim_kernels(const models::ModelSpec& model,
                                                              models::LayerOp op, models::Pass pass,
                                                              const models::OpContext& context,
                                                              std::optional<std::int64_t> one_expert_rows);

}  // namespace moesim::cost
