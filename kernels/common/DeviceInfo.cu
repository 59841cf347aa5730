#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "DeviceInfo.hpp"
#include "GpuCheck.hpp"

extern char** environ;

namespace moesim::kernels {
namespace {

// The few NVML entry points used, resolved with dlsym (nvml.h is not needed to build).
struct Nvml {
  using Init = int (*)();
  using HandleByBusId = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using DriverVersion = int (*)(char*, unsigned);
  using PowerUsage = int (*)(void*, unsigned*);
  using EventReasons = int (*)(void*, unsigned long long*);
  Init init = nullptr;
  HandleByBusId handle_by_bus_id = nullptr;
  ClockInfo clock_info = nullptr;
  ClockInfo max_clock_info = nullptr;
  DriverVersion driver_version = nullptr;
  PowerUsage power_usage = nullptr;      ///< optional: not every NVML build reports power
  PowerUsage power_limit = nullptr;      ///< optional: nvmlDeviceGetEnforcedPowerLimit
  EventReasons clock_reasons = nullptr;  ///< optional: why the SM clock is below its maximum
  bool ok = false;

  Nvml() {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return;
    init = reinterpret_cast<Init>(dlsym(library, "nvmlInit_v2"));
    handle_by_bus_id = reinterpret_cast<HandleByBusId>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info = reinterpret_cast<ClockInfo>(dlsym(library, "nvmlDeviceGetClockInfo"));
    max_clock_info = reinterpret_cast<ClockInfo>(dlsym(library, "nvmlDeviceGetMaxClockInfo"));
    driver_version = reinterpret_cast<DriverVersion>(dlsym(library, "nvmlSystemGetDriverVersion"));
    power_usage = reinterpret_cast<PowerUsage>(dlsym(library, "nvmlDeviceGetPowerUsage"));
    power_limit = reinterpret_cast<PowerUsage>(dlsym(library, "nvmlDeviceGetEnforcedPowerLimit"));
    // The newer name first; drivers before 535 only have the "throttle" one (same bits).
    clock_reasons = reinterpret_cast<EventReasons>(dlsym(library, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (clock_reasons == nullptr)
      clock_reasons =
          reinterpret_cast<EventReasons>(dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    ok = init && handle_by_bus_id && clock_info && max_clock_info && driver_version && init() == 0;
  }
};

const Nvml& nvml() {
  static const Nvml instance;
  return instance;
}

constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMemory = 2;

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace

GpuDescription describe_gpu(int device) {
  cudaDeviceProp props{};
  CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  GpuDescription gpu;
  gpu.index = device;
  gpu.name = props.name;
  char bus_id[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  gpu.pci_bus_id = bus_id;
#if defined(MOESIM_USE_HIP)
  gpu.arch = props.gcnArchName;
#else
  gpu.arch = "sm_" + std::to_string(props.major) + std::to_string(props.minor);
#endif
  gpu.multiprocessors = props.multiProcessorCount;
  gpu.memory_bytes = props.totalGlobalMem;
  gpu.l2_bytes = static_cast<std::size_t>(props.l2CacheSize);
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  gpu.peak_clock_mhz = clock_khz / 1000;
  return gpu;
}

GpuClocks read_clocks(const std::string& pci_bus_id) {
  GpuClocks clocks;
  const Nvml& api = nvml();
  if (!api.ok) return clocks;
  void* handle = nullptr;
  if (api.handle_by_bus_id(pci_bus_id.c_str(), &handle) != 0) return clocks;
  api.clock_info(handle, kNvmlClockSm, &clocks.sm_mhz);
  api.max_clock_info(handle, kNvmlClockSm, &clocks.sm_max_mhz);
  api.clock_info(handle, kNvmlClockMemory, &clocks.memory_mhz);
  api.max_clock_info(handle, kNvmlClockMemory, &clocks.memory_max_mhz);
  return clocks;
}

namespace {
// One optional NVML query of the device at pci_bus_id; 0 when NVML, the device or the entry point is missing.
template <typename Value, typename Query>
Value query_nvml(const std::string& pci_bus_id, Query query) {
  const Nvml& api = nvml();
  void* handle = nullptr;
  Value value = 0;
  if (!api.ok || query == nullptr || api.handle_by_bus_id(pci_bus_id.c_str(), &handle) != 0) return 0;
  return query(handle, &value) == 0 ? value : 0;
}
}  // namespace

unsigned read_power_mw(const std::string& pci_bus_id) {
  return query_nvml<unsigned>(pci_bus_id, nvml().power_usage);
}

unsigned read_power_limit_mw(const std::string& pci_bus_id) {
  return query_nvml<unsigned>(pci_bus_id, nvml().power_limit);
}

unsigned long long read_clock_reasons(const std::string& pci_bus_id) {
  return query_nvml<unsigned long long>(pci_bus_id, nvml().clock_reasons);
}

std::string clock_reason_names(unsigned long long reasons) {
  // nvml.h's nvmlClocksEventReason* bits.
  static const std::pair<unsigned long long, const char*> kNames[] = {
      {0x1, "idle"},        {0x2, "app_clocks"},      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"}, {0x10, "sync_boost"},     {0x20, "sw_thermal"},
      {0x40, "hw_thermal"}, {0x80, "hw_power_brake"}, {0x100, "display_clocks"}};
  std::string names;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!names.empty()) names += ",";
    names += name;
  }
  return names.empty() ? "none" : names;
}

std::string kernel_driver_version() {
  const Nvml& api = nvml();
  if (api.ok) {
    char buffer[96] = {};
    if (api.driver_version(buffer, sizeof buffer) == 0) return buffer;
  }
  std::ifstream proc("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(proc, line)) {
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) &&
          word.find('.') != std::string::npos) {
        return word;
      }
    }
  }
  return "unknown";
}

std::string cuda_driver_api_version() {
  int version = 0;
  CUDA_CHECK(cudaDriverGetVersion(&version));
  return version_text(version);
}

std::string cuda_runtime_version() {
  int version = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&version));
  return version_text(version);
}

std::vector<std::pair<std::string, std::string>> relevant_environment() {
  static const char* const kPrefixes[] = {"NCCL_",  "CUDA_",      "HIP_",    "ROCR_",      "RCCL_",
                                          "CUBLAS", "HIPBLASLT_", "MOESIM_", "TORCH_SYMM", "NVSHMEM_"};
  std::vector<std::pair<std::string, std::string>> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    for (const char* prefix : kPrefixes) {
      if (text.rfind(prefix, 0) == 0) {
        variables.emplace_back(text.substr(0, equals), text.substr(equals + 1));
        break;
      }
    }
  }
  return variables;
}

Json to_json(const GpuDescription& gpu, const GpuClocks& clocks) {
  Json value = Json::object();
  value["index"] = gpu.index;
  value["name"] = gpu.name;
  value["pci_bus_id"] = gpu.pci_bus_id;
  value["arch"] = gpu.arch;
  value["multiprocessors"] = gpu.multiprocessors;
  value["memory_bytes"] = static_cast<unsigned long long>(gpu.memory_bytes);
  value["l2_bytes"] = static_cast<unsigned long long>(gpu.l2_bytes);
  value["peak_clock_mhz"] = gpu.peak_clock_mhz;
  value["sm_clock_mhz"] = clocks.sm_mhz;
  value["sm_clock_max_mhz"] = clocks.sm_max_mhz;
  value["memory_clock_mhz"] = clocks.memory_mhz;
  value["memory_clock_max_mhz"] = clocks.memory_max_mhz;
  return value;
}

}  // namespace moesim::kernels
