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
      for (const std::string& bus : bus_ids_) {
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
    result[p] = {clock_sum_[p] / n, power_sum_[p] / n, count_[p], clock_min_[p], clock_max_[p], reasons_[p]};
  }
  return result;
}

}  // namespace moesim::kernels
