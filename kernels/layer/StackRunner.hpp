#pragma once
/**
 * @file A configuration on G GPUs: one host thread per GPU (as one process per GPU would be), one
 * NCCL communicator per GPU, the identity data-path check, and timed passes of the L-layer stack.
 */
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "LayerOps.hpp"
#include "PassSampler.hpp"

namespace moesim::kernels::layer {

/** @brief Per-iteration milliseconds of one pass: [iteration][rank]. */
struct PassTimes {
  std::vector<std::vector<double>> ms;
  /// [iteration][rank]: host ms the rank's thread waited at copy-engine barriers in the iteration (0 for
  /// NCCL)
  std::vector<std::vector<double>> barrier_wait_ms;
  PassSampler::Mean nvml;  ///< SM clock and board power over its iterations (warm-up included), all GPUs
  /** @brief Iteration time = the slowest rank's. */
  std::vector<double> stack_ms() const;
  /** @brief Each rank's samples. */
  std::vector<double> rank_ms(int rank) const;
};

/**
 * @brief Where one iteration's time goes on one rank: per step kind (op, collective launch, wait,
 * host sync), summed over layers, the median over the profiled iterations of
 *   gpu_ms   compute-stream time from the event before the step to the event after it (includes the
 *            stream idling while the host is still launching, and waits on collectives);
 *   host_ms  host thread time spent issuing the step (launch cost; the whole wait for host syncs).
 */
struct OpProfile {
  struct Entry {
    std::string name;
    int count = 0;  ///< steps of this name per iteration (usually one per layer)
    double gpu_ms = 0, host_ms = 0;
  };
  int rank = 0, iterations = 0;
  std::vector<Entry> entries;  ///< in first-appearance order
};

/** @brief One timed pass: the schedule, what runs (full, compute-only, comm-only) and its steps. */
struct PassSpec {
  ScheduleKind kind;
  PassMode mode;
  std::vector<Step> steps;
};

struct CheckResult {
  bool passed = true;
  std::string detail;
};

class Stack {
 public:
  /** @param devices GPU ordinals, one per rank. */
  Stack(const RunConfig& config, const std::vector<int>& devices, const std::vector<TokenRouting>& routing);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  /** @brief permute → dispatch → identity experts → combine → unpermute gives x·Σw (sampled tokens). */
  CheckResult check_data_path(Transport transport);
  /** @brief warmup + iters timed iterations of every pass, in `order`; one PassTimes per pass. */
  std::vector<PassTimes> time_passes(const std::vector<PassSpec>& passes, PassOrder order);
  /** @brief Per-step event timing of `iterations` iterations of `steps` on `rank` (after warm-up). */
  OpProfile profile_ops(ScheduleKind kind, PassMode mode, const std::vector<Step>& steps, int rank,
                        int iterations);
  /** @brief Grouped expert GEMMs give what one GEMM per expert gives, on random rows of every rank. */
  CheckResult check_grouped_experts();
  /** @brief Runs one full iteration of `steps` under `kind`; then no NaN/Inf in the stack's output. */
  CheckResult check_finite(ScheduleKind kind, const std::vector<Step>& steps);
  /** @brief Bytes of device memory in use on the first GPU (for the log). */
  std::size_t memory_used_bytes() const;

 private:
  /** @brief Runs fn(rank) on one thread per rank; the first exception is rethrown after all joined. */
  void on_every_rank(const std::function<void(int)>& fn);
  void run_iteration(int rank, const std::vector<Step>& steps);
  /** @brief Every rank's runner to (kind, mode) with real experts, before a profiled pass. */
  void configure_timed(ScheduleKind kind, PassMode mode);

  const RunConfig& config_;
  std::vector<int> devices_;
  std::vector<AlltoallPlan> alltoall_plans_;
  std::vector<AllreducePlan> allreduce_plans_;
  std::vector<std::unique_ptr<RankState>> states_;
  std::vector<std::unique_ptr<RankRunner>> runners_;
  std::unique_ptr<SpinBarrier> barrier_;
  World world_;
};

}  // namespace moesim::kernels::layer
