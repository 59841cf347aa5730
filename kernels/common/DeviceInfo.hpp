#pragma once
/**
 * @file What a result was measured on: GPUs, clocks, driver, runtime and library versions.
 *
 * Clocks come from NVML (loaded at run time with dlopen, so nothing links against it); where NVML
 * is missing (ROCm, containers without it) only the datasheet clock from the runtime is given.
 */
#include <string>
#include <utility>
#include <vector>

#include "moesim/kernels/Json.hpp"

namespace moesim::kernels {

/** @brief Current and maximum clocks of one GPU in MHz; 0 when unknown. */
struct GpuClocks {
  unsigned sm_mhz = 0;
  unsigned sm_max_mhz = 0;
  unsigned memory_mhz = 0;
  unsigned memory_max_mhz = 0;
};

/** @brief Static description of one GPU. */
struct GpuDescription {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  std::string arch;  ///< "sm_90" or the gcnArchName
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  std::size_t l2_bytes = 0;
  int peak_clock_mhz = 0;  ///< from the runtime's attribute
};

GpuDescription describe_gpu(int device);
/** @brief Live clocks through NVML; all zero when NVML is not available. */
GpuClocks read_clocks(const std::string& pci_bus_id);
/** @brief Board power draw in mW through NVML; 0 when NVML or its power reading is not available. */
unsigned read_power_mw(const std::string& pci_bus_id);
/** @brief Enforced board power limit in mW through NVML; 0 when not available. */
unsigned read_power_limit_mw(const std::string& pci_bus_id);
/** @brief NVML clock event ("throttle") reason bits active now; 0 when none or not available. */
unsigned long long read_clock_reasons(const std::string& pci_bus_id);
/** @brief "sw_power_cap,hw_thermal"-style names of reason bits; "none" for 0. */
std::string clock_reason_names(unsigned long long reasons);
/** @brief Kernel driver version ("580.159.04"), from NVML or /proc/driver/nvidia/version; "unknown". */
std::string kernel_driver_version();
/** @brief "13.0"-style text from cudaDriverGetVersion / cudaRuntimeGetVersion. */
std::string cuda_driver_api_version();
std::string cuda_runtime_version();
/** @brief Environment variables that change results (NCCL_*, CUDA_*, HIP_*, CUBLAS*, MOESIM_*). */
std::vector<std::pair<std::string, std::string>> relevant_environment();

Json to_json(const GpuDescription& gpu, const GpuClocks& clocks);

}  // namespace moesim::kernels
