#pragma once
/**
 * @file Learns an implementation profile (cost::ImplementationProfile) from PyTorch profiler traces of a
 * user's own MoE stack: `moesim calibrate --torch-trace TRACE... --impl-out IMPL.json`.
 *
 * Each trace's profiled step is attributed op by op (traces::attribute_step). For every (op, pass) one
 * layer's launches and host syncs, in host order, become the entry's steps, each a template that holds at
 * other configurations:
 *   - GEMM kernels keep moesim's shape formulas for the op; their rate is the hardware profile's times an
 *     efficiency learned as predicted / traced time (per GEMM where the trace has moesim's GEMMs one for one,
 *     else one ratio for all of the op's GEMMs);
 *   - attention kernels keep moesim's attention model times the traced / predicted factor;
 *   - every other kernel becomes a MEMORY step whose traffic is bytes_per_element · rows · width, with rows
 * and width the op's quantities whose product is the element count of the largest tensor its CPU op read (the
 *     shapes record_shapes keeps), and bytes_per_element the traffic that the hardware profile's memory curve
 *     times as the traced duration; a kernel no quantity explains keeps its traced time (FIXED);
 *   - NCCL kernels inside a compute op (the split-size exchange) are FIXED steps run only with EP > 1, at the
 *     hardware profile's time for so small an all-to-all;
 *   - host time before each step is the traced gap scaled by the profiler's inflation: (untraced issue time −
 *     traced blocked time) / (traced step host time − traced blocked time), the untraced issue time coming
 * from the run record beside the trace;
 *   - routed experts' launches that repeat once per local expert (a loop over experts) become PER_EXPERT
 * steps. A trace with no record beside it needs the configuration given; what cannot be attributed is
 * reported.
 */
#include <string>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/traces/OpAttribution.hpp"

namespace moesim::calibrate {

/** @brief One traced step and the configuration that ran it. */
struct TracedStack {
  traces::AttributedStep step;
  models::ModelSpec model;
  int ep = 1;
  std::int64_t tokens = 0;  ///< per rank
  std::int64_t seq = 0;
  /** @brief Rank 0's untraced host time to issue one step (ms); 0 when unknown (no inflation correction). */
  double issue_ms = 0;
  /** @brief ... to issue its forward (ms); 0 when unknown (one inflation correction for both passes). */
  double forward_issue_ms = 0;
  std::string cpu_model;  ///< the host CPU ("" unknown)
  /** @brief Rank 0's host probe while the untraced steps ran (us per op; 0 unknown): the profile's
   * host_probe_us. */
  double host_probe_us = 0;
  std::string label;  ///< for notes (the trace file)
  /// what of the configuration was read from the trace itself, for a note ("" nothing)
  std::string read_from_trace;
};

/** @brief A learned profile and what the learner has to say about it. */
struct LearnedImplementation {
  cost::ImplementationProfile profile;
  /** @brief One line each: host inflation per trace, unattributed kernels, fallbacks taken. */
  std::vector<std::string> notes;
};

/** @brief The configuration of a traced run where no record lies beside the trace (0 or empty: from the
 * record). */
struct TracedRunConfig {
  std::string model;  ///< a shipped model name or a spec file
  int ep = 0;
  std::int64_t tokens = 0;  ///< per rank
  std::int64_t seq = 0;
  double issue_ms = 0;          ///< untraced host time to issue one step (ms)
  double forward_issue_ms = 0;  ///< ... to issue its forward (ms; needs issue_ms)
  double host_probe_us = 0;     ///< the traced host's probe (us per op; torch_stacks.host_probe)
};

/**
 * @brief Reads and attributes `trace_file` and finds its configuration: the torch-stack record beside it
 * (`NAME.rankR.trace.json.gz` -> `NAME.json`: model, EP, tokens, seq, untraced issue time, host CPU), with
 * any value `given` sets taking precedence. Where neither says, the trace itself: EP 1 when the step launched
 * no collective kernel; tokens and sequence from its first layer's attention inputs (the sequence as the
 * tokens where the attention is not one fused kernel). ConfigError naming the trace and the missing flag
 * otherwise.
 */
TracedStack load_traced_stack(const std::string& trace_file, const TracedRunConfig& given);

/**
 * @brief Learns profile `name` from `stacks` (at least one) relative to hardware profile `hw`. An (op, pass)
 * learned from several traces takes the first trace that has it. The profile's base (the shipped profile that
 * answers for ops the traces cannot show: shared experts the traced model lacks, another attention type) is
 * `base`, or where that is empty eager when the routed experts loop over the experts and grouped otherwise.
 * ConfigError when a stack's configuration cannot be run by moesim (EP not dividing the experts...).
 */
LearnedImplementation learn_implementation(const std::vector<TracedStack>& stacks, const hw::HwProfile& hw,
                                           const std::string& name, const std::string& base = "");

}  // namespace moesim::calibrate
