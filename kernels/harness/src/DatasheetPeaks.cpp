#include "moesim/kernels/DatasheetPeaks.hpp"

#include <vector>

namespace moesim::kernels {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

std::optional<DatasheetPeak> datasheet_peak(const std::string& device_name) {
  // Order matters: the more specific variant names are tested first.
  if (contains(device_name, "H100") && contains(device_name, "PCIe")) {
    return DatasheetPeak{"H100 PCIe", 756.5, 1513.0, 2000.0};
  }
  if (contains(device_name, "H100") && contains(device_name, "NVL")) {
    return DatasheetPeak{"H100 NVL", 835.5, 1670.5, 3900.0};
  }
  if (contains(device_name, "H100")) return DatasheetPeak{"H100 SXM5", 989.4, 1978.9, 3350.0};
  if (contains(device_name, "H200") && contains(device_name, "NVL")) {
    return DatasheetPeak{"H200 NVL", 835.5, 1670.5, 4800.0};
  }
  if (contains(device_name, "H200")) return DatasheetPeak{"H200 SXM", 989.4, 1978.9, 4800.0};
  if (contains(device_name, "A100")) return DatasheetPeak{"A100 SXM4 80GB", 312.0, 0.0, 2039.0};
  if (contains(device_name, "MI325X")) return DatasheetPeak{"MI325X", 1307.4, 2614.9, 6000.0};
  if (contains(device_name, "MI300X")) return DatasheetPeak{"MI300X", 1307.4, 2614.9, 5300.0};
  return std::nullopt;
}

}  // namespace moesim::kernels
