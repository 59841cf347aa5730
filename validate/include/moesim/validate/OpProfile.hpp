#pragma once
/**
 * @file The layer runner's op profile (`layer_runner --op-profile on`), measured and predicted.
 *
 * The runner times one rank's iteration step by step (kernels/layer/Schedule.hpp lists the steps):
 * before and after each step it records a CUDA event on the compute stream, and it reads the host clock
 * around the step's calls. A step's GPU time is the gap between its two events. The compute stream
 * passes an event once the host has enqueued it and everything enqueued before it has run, so a step's
 * GPU time holds its kernels, the stream waits it makes, and any stretch in which the GPU ran dry while
 * the host was still enqueuing the step (a copy-engine all-to-all's host launch after a host sync, a
 * host-bound expert loop). The steps' GPU times add up to the rank's stack time.
 *
 * The prediction replays those events on a simulated rank: it walks the rank's host-launched ops in
 * host order, groups them into the runner's steps by the names ProgramBuilder gives them
 * ("L<layer>.<op>.<kernel>" kernels, "L<layer>.<comm>" collectives, "L<layer>.split_sizes_to_host"),
 * puts a wait step before the first kernel that depends on one of the rank's collectives (the runner
 * waits on the collective's done event right before the op that consumes it), and computes each step's
 * event times from the simulated launch and end times. Programs that do not mirror the runner (FoldMoE,
 * FlashMoE, backward passes) give steps that the runner has no names for.
 *
 * Not modeled: the runner's profiling itself. Its events cost ~3 µs of GPU time per step (a step with no
 * kernels reads ~0.003 ms a layer), and its rank's extra host work makes that rank the last to reach
 * every copy-engine barrier, so the profiled iteration shows no barrier waits.
 */
#include <string>
#include <vector>

#include "moesim/sim/Program.hpp"
#include "moesim/sim/RunResult.hpp"

namespace moesim::validate {

/** @brief One step of the runner's program, summed over the layers of the stack. */
struct OpProfileStep {
  std::string step;  ///< the runner's name: "ATTN_CORE", "RESIDUAL_ADD", "launch dispatch", "wait combine",
                     ///< "host_sync"
  int count = 0;     ///< times it occurs in the stack
  double gpu_ms = 0;
  double host_ms = 0;
};

/**
 * @brief The op profile `rank` would record on the simulated run, steps in order of first appearance.
 * ScheduleError when `rank` is not simulated.
 */
std::vector<OpProfileStep> predict_op_profile(const sim::Program& program, const sim::RunResult& run,
                                              int rank);

/** @brief The runner's name for the step an op belongs to ("ATTN_CORE", "launch dispatch"), "" for none. */
std::string op_profile_step_name(const sim::Op& op);

}  // namespace moesim::validate
