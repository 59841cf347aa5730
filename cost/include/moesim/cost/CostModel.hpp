#pragma once
/**
 * @file Turns model-side kernel costs (FLOPs, bytes, shapes) into engine work on one GPU: the kernel
 * rates and host launch costs a hardware profile gives them.
 */
#include <string>
#include <vector>

#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/DType.hpp"
#include "moesim/models/OpCost.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::cost {

/**
 * @brief Alone-on-the-GPU work of a kernel:
 *   compute_ns  = flops / (sustained peak · efficiency(kind, shape))
 *   memory_ns   = bytes / (HBM bandwidth · memory_efficiency(bytes))
 *   fixed_ns    = the profile's shortest kernel (device-side start and drain)
 *   sm_fraction = output tiles (128×128) / SMs, capped at 1, for GEMMs; 1 otherwise.
 *   peak_ns     = tensor FLOPs (GEMM, grouped GEMM, attention) / the dtype's dense peak, for energy
 *   hbm_bytes   = the bytes the cost moves, for energy
 */
/** @brief Host cost of launching `cost`: a BLAS call for GEMMs (blas_call_overhead when the profile has it).
 */
double launch_ns(const hw::HwProfile& hw, const models::KernelCost& cost);

sim::KernelWork kernel_work(const hw::HwProfile& hw, const models::KernelCost& cost, models::DType dtype,
                            hw::AttentionImpl attention = hw::AttentionImpl::FUSED);

/** @brief HBM bandwidth of a large streaming kernel (the memory table's best efficiency): what kernels
 * and collective traffic share in the engine. */
double streaming_hbm_Bps(const hw::HwProfile& hw);

/** @brief What a piece of an op is on the engine. */
enum class PieceKind {
  KERNEL,     ///< a kernel on the compute stream, launched after `launch_ns` of host time
  HOST_SYNC,  ///< the host waits for the compute stream to drain, then spends `launch_ns` (a device->host
              ///< copy)
};

/**
 * @brief One kernel an op launches, or one host synchronisation it makes: its engine work, its host cost and
 * the FLOPs it counts for MFU.
 */
struct KernelPiece {
  std::string name;
  sim::KernelWork work;
  double launch_ns = 0;
  double flops = 0;
  PieceKind kind = PieceKind::KERNEL;
};

/**
 * @brief Unfused forward attention as eager frameworks and kernels/layer_runner run it: the B·H
 * head-sequences go in chunks whose fp32 scores and bf16 probabilities fit a 2 GiB budget, and each
 * chunk is a QK^T GEMM, a causal softmax pass and a PV GEMM. The pieces add up to `kernel_work`'s time;
 * they matter because a collective kernel can start only at a kernel boundary, and because the GEMMs
 * are HBM-bound where the softmax is not.
 */
std::vector<KernelPiece> unfused_attention_pieces(const hw::HwProfile& hw, const models::KernelCost& cost,
                                                  models::DType dtype, std::int64_t head_sequences);

/** @brief Host time to launch one kernel eagerly (ns). */
double launch_ns(const hw::HwProfile& hw);

/** @brief Host time to issue one copy of a copy-engine collective (ns); launch_ns when not calibrated. */
double copy_launch_ns(const hw::HwProfile& hw);

}  // namespace moesim::cost
