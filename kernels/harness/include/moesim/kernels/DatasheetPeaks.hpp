#pragma once
/**
 * @file Vendor datasheet peaks used as the denominator of efficiency columns.
 *
 * Dense (no structured sparsity) tensor rates and HBM bandwidth of the SXM/OAM parts, by the
 * vendors' datasheets: NVIDIA H100 (SXM5, PCIe, NVL) and H200 (SXM, NVL), A100 SXM 80GB,
 * AMD Instinct MI300X and MI325X. These are ceilings to compare with, not measurements.
 */
#include <optional>
#include <string>

namespace moesim::kernels {

/** @brief One part's datasheet peaks; fp8 is 0 where the part has no fp8 tensor path. */
struct DatasheetPeak {
  std::string part;              ///< e.g. "H100 SXM5"
  double bf16_dense_tflops = 0;  ///< dense bf16 tensor rate
  double fp8_dense_tflops = 0;   ///< dense fp8 tensor rate
  double hbm_GBps = 0;           ///< HBM bandwidth, 1e9 bytes/s
  /// dense tf32 tensor rate: half the bf16 rate on every part listed (H100 SXM datasheet: 989 and
  /// 1979 TFLOPS with sparsity; A100: 156 and 312 dense; MI300X: 653.7 and 1307.4 dense)
  double tf32_dense_tflops() const { return bf16_dense_tflops / 2; }
};

/**
 * @brief The peaks for a device name as the runtime reports it ("NVIDIA H100 80GB HBM3",
 * "NVIDIA H200", "AMD Instinct MI300X", ...); std::nullopt for an unknown part.
 */
std::optional<DatasheetPeak> datasheet_peak(const std::string& device_name);

}  // namespace moesim::kernels
