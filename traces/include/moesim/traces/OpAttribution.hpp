#pragma once
/**
 * @file Every GPU launch and host synchronisation of one profiled step, attributed to the op of moesim's
 * layer DAG that made it, with the host time spent before it.
 *
 * How a launch finds its op (kernels/torch_stacks/README.md states the conventions; a trace without moesim's
 * ranges has them made from its module calls first, traces/ModuleRanges.hpp):
 *   1. the innermost record_function range `moesim.L<layer>.<op>` of the launching thread that holds the
 * launch call: forward ops (moesim's op names; transformers' module hooks add `attention`, whose remainder
 * outside attn_qkv/attn_out is core attention, and `moe`, whose remainder outside gate/routed/shared experts
 * is counted as unpermute; `dispatch_wait`/`combine_wait` count as their collective; `qk_norm`, around
 * per-head query/key norms, counts as attn_qkv with its items marked);
 *   2. else the autograd node (`autograd::engine::evaluate_function: ...`) that holds it: its sequence number
 *      names the forward CPU op it differentiates, whose range gives layer and op (backward);
 *   3. else, on the step's thread inside its `moesim.forward` range, outside every layer range: the model's
 * own ops (model_inputs before the first range, residual_add of the layer before between ranges, final_norm
 *      after the last, or the op of a model_inputs/final_norm range just before);
 *   4. else it is unattributed and reported by kernel name with its count and time.
 * Host time before an item is the launching thread's time since its previous item started (since the end of a
 * synchronisation, or of a launch's wait for a slot in a full launch queue: time the host spent blocked is
 * not host work).
 */
#include <optional>
#include <string>
#include <vector>

#include "moesim/traces/TorchTrace.hpp"

namespace moesim::traces {

/** @brief A GPU launch or a host synchronisation. */
struct TracedItem {
  enum class Kind { LAUNCH, SYNC };
  Kind kind = Kind::LAUNCH;
  GpuEvent gpu;                                   ///< LAUNCH: what ran
  std::string cpu_op;                             ///< LAUNCH: the CPU op that launched it ("" unknown)
  std::vector<std::vector<std::int64_t>> inputs;  ///< LAUNCH: that op's Input Dims
  std::vector<std::string> input_types;           ///< LAUNCH: that op's Input type ("" where not a tensor's)
  double host_us = 0;                             ///< host work on the thread before this item
  double wait_us = 0;                             ///< SYNC: time the host was blocked
  /// launched inside a `moesim.L<layer>.qk_norm` range (per-head query/key norms, attn_qkv's) or by the
  /// gradient of an op there: a profile learns it as a step only models with those norms run
  bool qk_norm = false;
};

/** @brief Everything one op of one layer launched in one pass, in host order. */
struct OpCall {
  int layer = 0;
  std::string op;  ///< moesim's op name (attn_norm ... residual_add) or a collective (dispatch, combine)
  bool backward = false;
  std::vector<TracedItem> items;
};

/** @brief GPU work no op claims, by kernel name. */
struct UnattributedKernels {
  std::string name;
  int count = 0;
  double gpu_us = 0;
};

/** @brief One profiled step, attributed. */
struct AttributedStep {
  std::string file;
  double host_us = 0;  ///< the `moesim.step` range (host time to issue the step, profiler overhead included)
  double wait_us = 0;  ///< host time blocked during the step (syncs, launches at a full queue)
  /// host time from the step's start to the end of its `moesim.forward` range (0: no such range)
  double forward_host_us = 0;
  double forward_wait_us = 0;  ///< the part of wait_us before that end
  double gpu_us = 0;           ///< GPU time of every event the step launched
  int layers = 0;              ///< 1 + the largest layer of a range
  bool has_backward = false;
  /// the trace had no moesim ranges: its ops were read from its module calls (traces/ModuleRanges.hpp)
  bool ops_from_modules = false;
  std::vector<OpCall> calls;                      ///< by (layer, op, pass), in order of first launch
  std::vector<UnattributedKernels> unattributed;  ///< largest GPU time first
  int unattributed_syncs = 0;
  /// host time before the launches and syncs no op claims (outside the forward's layer ranges and gaps, and
  /// backward ops whose forward op none claims)
  double unattributed_host_us = 0;
  /// host time from the `moesim.step` range's start to the step's first launch (0: no such range)
  double first_launch_us = 0;
  /// launches that waited for a slot in a full launch queue, and how long in all (part of wait_us)
  int full_queue_launches = 0;
  double full_queue_wait_us = 0;
  /** @brief The call of (layer, op, pass), or nullptr. */
  const OpCall* find(int layer, const std::string& op, bool backward) const;
  double unattributed_gpu_us() const;
};

/**
 * @brief Attributes the last `moesim.step` range of `trace` (the whole trace when it has none). ConfigError
 * naming the file when no launch of the step could be attributed to any op (a trace with neither moesim.L
 * ranges nor module calls).
 */
AttributedStep attribute_step(const TorchTrace& trace);

/** @brief Factors that take the profiler's overhead out of traced host times, per pass. */
struct ProfilerHostScale {
  double forward = 1, backward = 1;
  bool per_pass = false;  ///< from the forward's own untraced issue time (else one factor for both)
  double of(bool backward_pass) const { return backward_pass ? backward : forward; }
};

/**
 * @brief How much the profiler inflated the step's host work: (untraced issue time − blocked time) / (traced
 * host time − blocked time), in [0.05, 1], the blocked time taken as the traced one. Per pass when the
 * untraced forward's issue time is known (> 0) and the step traced a backward after its `moesim.forward`
 * range: Python issues the forward op by op, autograd's engine the backward, and a profiler slows the two
 * unequally (transformers' eager experts, traced training step on H200: forward 1.4x, backward 1.0x); else
 * one factor for the step. nullopt when the untraced issue time is unknown (<= 0) or the traced step was all
 * blocked.
 */
std::optional<ProfilerHostScale> profiler_host_scale(const AttributedStep& step, double untraced_issue_ms,
                                                     double untraced_forward_issue_ms = 0);

/** @brief moesim's op for a range's op name (`attention` -> attn_core, `qk_norm` -> attn_qkv...); nullopt for
 * names it does not know. */
std::optional<std::string> moesim_op_of_range(const std::string& name);

}  // namespace moesim::traces
