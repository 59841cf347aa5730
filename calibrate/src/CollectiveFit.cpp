#include "moesim/calibrate/CollectiveFit.hpp"

#include <algorithm>
#include <map>

#include "moesim/calibrate/Fitting.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::calibrate {

CollectiveFit fit_collective(hw::CollectiveKind kind, int gpus, std::vector<SizeTime> points,
                             double fallback_step_latency_s, const CollectiveFitOptions& options) {
  std::map<double, std::vector<double>> by_size;
  for (const SizeTime& p : points) by_size[p.bytes].push_back(p.time_s);
  const int steps = hw::collective_steps(kind, gpus);
  CollectiveFit fit;
  std::vector<double> latency_times;
  for (const auto& [bytes, times] : by_size) {
    if (bytes <= options.latency_max_bytes) latency_times.push_back(median(times));
  }
  fit.latency_points = static_cast<int>(latency_times.size());
  const double alpha = latency_times.empty() ? steps * fallback_step_latency_s : median(latency_times);
  fit.step_latency_s = alpha / steps;
  for (const auto& [bytes, times] : by_size) {
    if (bytes <= options.latency_max_bytes) continue;
    const double t = median(times);
    if (t - alpha < options.min_transfer_share * t) {
      ++fit.dropped_points;
      continue;
    }
    fit.bytes.push_back(bytes);
    fit.busbw_Bps.push_back(hw::bus_bytes(kind, gpus, bytes) / (t - alpha));
  }
  return fit;
}

}  // namespace moesim::calibrate
