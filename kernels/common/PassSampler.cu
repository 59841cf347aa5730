#include <algorithm>
#include <chrono>

#include "DeviceInfo.hpp"
#include "PassSampler.hpp"

namespace moesim::kernels {

PassSampler::PassSampler(std::vector<std::string> bus_ids, std::size_t passes, unsigned period_us)
    : bus_ids_(std::move(bus_ids)),
      period_us_(period_us),
      clock_sum_(passes, 0.0),
      power_sum_(passes, 0.0),
      count_(passes, 0),
      clock_min_(passes, 0),
      clock_max_(passes, 0),
      reasons_(passes, 0),
      gpu_clock_sum_(passes, std::vector<double>(bus_ids_.size(), 0.0)),
      gpu_power_sum_(passes, std::vector<double>(bus_ids_.size(), 0.0)),
      gpu_count_(passes, std::vector<std::size_t>(bus_ids_.size(), 0)),
      thread_([this] { loop(); }) {}

PassSampler::~PassSampler() {
  running_ = false;
  thread_.join();
}

void PassSampler::set_pass(std::size_t pass) {
  pass_ = pass;
}

void PassSampler::loop() {
  while (running_) {
    const std::size_t pass = pass_;
    if (pass < count_.size()) {
      for (std::size_t g = 0; g < bus_ids_.size(); ++g) {
        const std::string& bus = bus_ids_[g];
        const GpuClocks clocks = read_clocks(bus);
        if (clocks.sm_mhz == 0) continue;  // no NVML: no sample
        const unsigned milliwatts = read_power_mw(bus);
        const unsigned long long reasons = read_clock_reasons(bus);
        const std::lock_guard<std::mutex> guard(lock_);
        clock_sum_[pass] += clocks.sm_mhz;
        power_sum_[pass] += milliwatts / 1000.0;
        clock_min_[pass] = count_[pass] == 0 ? clocks.sm_mhz : std::min(clock_min_[pass], clocks.sm_mhz);
        clock_max_[pass] = std::max(clock_max_[pass], clocks.sm_mhz);
        reasons_[pass] |= reasons;
        ++count_[pass];
        gpu_clock_sum_[pass][g] += clocks.sm_mhz;
        gpu_power_sum_[pass][g] += milliwatts / 1000.0;
        ++gpu_count_[pass][g];
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(period_us_));
  }
}

std::vector<PassSampler::Mean> PassSampler::means() {
  const std::lock_guard<std::mutex> guard(lock_);
  std::vector<Mean> result(count_.size());
  for (std::size_t p = 0; p < count_.size(); ++p) {
    if (count_[p] == 0) continue;
    const auto n = static_cast<double>(count_[p]);
    result[p] = {clock_sum_[p] / n, power_sum_[p] / n, count_[p], clock_min_[p],
                 clock_max_[p],     reasons_[p],       {},        {}};
    for (std::size_t g = 0; g < bus_ids_.size(); ++g) {
      const auto k = static_cast<double>(std::max<std::size_t>(gpu_count_[p][g], 1));
      result[p].sm_clock_mhz_per_gpu.push_back(gpu_clock_sum_[p][g] / k);
      result[p].power_w_per_gpu.push_back(gpu_power_sum_[p][g] / k);
    }
  }
  return result;
}

}  // namespace moesim::kernels
