#pragma once
/**
 * @file From measurements to a calibrated hardware profile.
 *
 *   --from results.json ...   --> BenchResults ---+
 *   --nccl-tests *_perf.log   --> NcclTestsLog ---+--> calibrate(base, inputs) --> HwProfile + residuals
 *   --torch-trace trace.json  --> KinetoTrace  ---+          |
 *                                                            +-- everything not measured: from `base`
 *
 * What each measurement sets (the rules are spelled out in the `source` strings it writes):
 *   power         the "power" section (power_bench loads, PowerFit.hpp). With a power section (fitted, or the
 *                 base's), gemm / grouped_gemm / attention cases whose NVML clock was below the maximum are
 *                 first scaled to the maximum clock by (max / clock)^clock_rate_exponent, so the tables below
 *                 describe the GPU at its maximum clock; cases without an NVML reading are used as measured
 *   gemm          efficiency.gemm (grid filled by log-shape interpolation), gemm_dtype_factor
 *   grouped_gemm  grouped_gemm_factor (one-kernel "batched" cases against the fitted GEMM model)
 *   tile_gemm     efficiency.tile_gemm: per dtype, the persistent case with the most tiles (used as measured)
 *   torch_sdpa    attention_fwd, attention_bwd and attention_bwd_factor (the best SDPA back end per shape);
 *   attention     ... from our unfused kernel only when no SDPA results are given
 *   memory        efficiency.memory (bins of 4x in bytes; L2-resident cases above the HBM peak dropped)
 *   collectives / nccl-tests   collective tables per kind and group size (intra-node)
 *   contention    contention.comm_sms, compute_slowdown_with_comm, comm_slowdown_with_compute
 *   launch        gpu.launch_overhead_us, copy_launch_overhead_us, graph_launch_overhead_us,
 *                 graph_node_overhead_us, kernel_min_us
 *   torch trace   checks GEMM efficiencies against traced kernel times; scales the GEMM table by
 *                 the traced / predicted ratio when no gemm results are given
 */
#include <string>
#include <vector>

#include "moesim/calibrate/BenchResults.hpp"
#include "moesim/calibrate/KinetoTrace.hpp"
#include "moesim/calibrate/NcclTestsLog.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::calibrate {

/** @brief Everything calibrate() reads, already parsed. */
struct CalibrationInputs {
  BenchResults bench;
  std::vector<NcclTestsLog> nccl_tests;
  std::vector<KinetoTrace> traces;
};

/** @brief How well the fitted model reproduces one group of measurements. */
struct Residual {
  std::string table;   ///< e.g. "gemm bf16", "all_to_all intra 4", "contention comm"
  int points = 0;      ///< measurements compared
  double max_rel = 0;  ///< max |model − measured| / measured
  double mean_rel = 0;
  std::string note;  ///< what was compared (time or efficiency) and anything left out
};

/** @brief The calibrated profile and its fit report. */
struct CalibrationResult {
  hw::HwProfile profile;
  std::vector<Residual> residuals;
  std::vector<std::string> notes;  ///< inputs ignored, tables kept from the base, ...
};

/**
 * @brief Fits a profile. The result starts as a copy of `base`; each measured part replaces the
 * corresponding part (see the file comment), provenance becomes kind=calibrated with date, device,
 * driver and library versions from the inputs, and the profile passes hw::validate().
 * ConfigError when the inputs hold nothing to fit or contradict the base (another GPU type).
 */
CalibrationResult calibrate(const hw::HwProfile& base, const CalibrationInputs& inputs);

/** @brief The residual report: '#'-prefixed, nccl-tests style two-row header, one line per table. */
std::string format_residuals(const CalibrationResult& result);

}  // namespace moesim::calibrate
