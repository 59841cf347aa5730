#pragma once
/**
 * @file SM clock and board power sampled through NVML while timed passes run, credited to the pass
 * running at the time. A schedule that keeps the GPU busier can draw more power and run at a lower
 * clock than one that idles while it waits on communication; the samples show whether it did.
 */
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace moesim::kernels {

class PassSampler {
 public:
  /** @brief Mean over the samples (and GPUs) taken while one pass ran; zero samples when NVML is absent. */
  struct Mean {
    double sm_clock_mhz = 0, power_w = 0;
    std::size_t samples = 0;
    unsigned min_sm_clock_mhz = 0, max_sm_clock_mhz = 0;
    unsigned long long clock_reasons = 0;  ///< NVML clock event reason bits seen in any sample (OR)
    /// The same means GPU by GPU, in the order of the bus ids: under a power cap GPUs of one model settle at
    /// different clocks, and a synchronous collective waits for the slowest
    std::vector<double> sm_clock_mhz_per_gpu, power_w_per_gpu;
  };

  /** @brief Starts sampling `bus_ids` every `period_us` for `passes` passes (none current yet). */
  PassSampler(std::vector<std::string> bus_ids, std::size_t passes, unsigned period_us = 1000);
  ~PassSampler();
  PassSampler(const PassSampler&) = delete;
  PassSampler& operator=(const PassSampler&) = delete;

  /** @brief Samples from now on belong to pass `pass` (or to none with kNoPass). */
  void set_pass(std::size_t pass);
  std::vector<Mean> means();

  static constexpr std::size_t kNoPass = static_cast<std::size_t>(-1);

 private:
  void loop();

  std::vector<std::string> bus_ids_;
  unsigned period_us_;
  std::atomic<std::size_t> pass_{kNoPass};
  std::atomic<bool> running_{true};
  std::mutex lock_;
  std::vector<double> clock_sum_, power_sum_;
  std::vector<std::size_t> count_;
  std::vector<unsigned> clock_min_, clock_max_;
  std::vector<unsigned long long> reasons_;
  std::vector<std::vector<double>> gpu_clock_sum_, gpu_power_sum_;  ///< [pass][gpu]
  std::vector<std::vector<std::size_t>> gpu_count_;
  std::thread thread_;
};

}  // namespace moesim::kernels
