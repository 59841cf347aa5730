#pragma once
/**
 * @file From traced kernels to the templates of an implementation profile: which quantities of the op a
 * kernel's traffic scales with, the traffic the hardware profile's memory curve needs for a traced duration,
 * and moesim's own prediction of the op's GEMM and attention kernels at the traced configuration.
 */
#include <optional>
#include <string>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/LayerOps.hpp"
#include "moesim/traces/OpAttribution.hpp"

namespace moesim::calibrate::detail {

/** @brief The quantities of one op at the traced configuration. */
struct TracedQuantities {
  const models::ModelSpec* model = nullptr;
  models::OpContext context;     ///< moesim's context of the op at the traced configuration
  std::int64_t expert_rows = 0;  ///< rows of one local expert (balanced routing)
  bool per_expert = false;       ///< the kernel runs once per local expert
};

/** @brief Rows and width whose product (times a small factor) is a kernel's element count. */
struct TrafficShape {
  cost::ImplRows rows = cost::ImplRows::NONE;
  cost::ImplWidth width = cost::ImplWidth::ONE;
  double elements = 0;  ///< rows · width at the traced configuration
};

/** @brief The dims of the largest tensor among a CPU op's inputs (empty when none has a shape). */
std::vector<std::int64_t> largest_input(const std::vector<std::vector<std::int64_t>>& inputs);

/** @brief The product of `dims` (0 when empty). */
double element_count(const std::vector<std::int64_t>& dims);

/**
 * @brief The rows and width of `op` whose product, times 1, 2, 1/2, 3 or 4 (exact products first), is the
 * element count of a tensor of `dims`, preferring the widths the op works on; nullopt when none is. Where
 * several quantities give that count (every Qwen3 trace at 2,048 tokens has tokens = hidden), rows that are
 * the product of a run of adjacent dims come first: a [2048, 4, 64] key half is tokens x kv_width / 2, not
 * routed_rows x heads.
 */
std::optional<TrafficShape> traffic_shape(models::LayerOp op, const TracedQuantities& q,
                                          const std::vector<std::int64_t>& dims);

/** @brief rows · width of `shape`'s quantities at `q`. */
double traffic_elements(const TracedQuantities& q, cost::ImplRows rows, cost::ImplWidth width);

/**
 * @brief HBM bytes whose memory-kernel time on `hw` (kernel_min + bytes / (bandwidth · efficiency(bytes))) is
 * `duration_s`; 0 when the duration is within kernel_min.
 */
double bytes_for_duration(const hw::HwProfile& hw, double duration_s);

/** @brief The bytes of one tensor of `dims` and record_shapes' element `type`; nullopt for a type it cannot
 * size. */
std::optional<double> tensor_bytes(const std::vector<std::int64_t>& dims, const std::string& type);

/**
 * @brief The bytes a CPU op's tensor operands hold, each read once, plus a write of the largest (shapes and
 * element types from record_shapes); nullopt when an operand with a shape has a type it cannot size or none
 * has a shape.
 */
std::optional<double> operand_bytes(const std::vector<std::vector<std::int64_t>>& inputs,
                                    const std::vector<std::string>& types);

/**
 * @brief Whether CPU op `op` reduces its input (sum, mean, amax...): its kernels keep speeding up with their
 * size where a streaming kernel's rate levels off (one H200: torch's mean over rows of 4,096 at 0.8 TB/s at
 * 17 MB and 3.5 at 269 MB, its pow at 1.9 and 3.9; data/calibration/2026-11-29-nvidia-h200-l2-rates, cold).
 */
bool is_reduction(const std::string& op);

/** @brief moesim's GEMM (or attention) kernels of an op at the traced configuration, with their alone time.
 */
struct PredictedKernel {
  models::KernelCost cost;
  double variable_ns = 0;  ///< max(compute, memory): what an efficiency or a time factor scales
  double fixed_ns = 0;
};

/**
 * @brief moesim's kernels of `op` of class GEMM/GROUPED_GEMM (gemms) or ATTENTION (!gemms) in `backward` or
 * forward, for one local expert of q.expert_rows rows when q.per_expert, else with grouped routed experts.
 */
std::vector<PredictedKernel> predicted_kernels(const hw::HwProfile& hw, models::LayerOp op, bool backward,
                                               const TracedQuantities& q, bool gemms);

}  // namespace moesim::calibrate::detail
