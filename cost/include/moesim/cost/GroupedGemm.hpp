#pragma once
/**
 * @file A grouped GEMM launch over the local experts priced group by group, as an implementation profile's
 * `grouped` model of its kernel family says (ImplGroupedGemm, cost/IMPL_FORMAT.md).
 */
#include <cstdint>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/OpCost.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::cost {

/** @brief The row tile `model` uses for a launch whose active groups have `mean_rows` rows on average. */
std::int64_t grouped_row_tile(const ImplGroupedGemm& model, double mean_rows);

/**
 * @brief The work of `launch` (a GROUPED_GEMM of models::layer_op_kernels: forward, `.dgrad` or `.wgrad`)
 * when its groups hold `rows` rows each: kernel_work's, with the time the groups spend one after another on
 * the SMs (the sum of each group's roofline, see ImplGroupedGemm) as its compute time. Its HBM traffic and
 * floor stay kernel_work's.
 */
sim::KernelWork grouped_gemm_work(const hw::HwProfile& hw, const models::KernelCost& launch,
                                  models::DType dtype, const std::vector<std::int64_t>& rows,
                                  const ImplGroupedGemm& model);

}  // namespace moesim::cost
