#pragma once
/**
 * @file Emits one rank's layer ops into a sim::Program: the kernels of each sub-block on the compute
 * stream (each paying its host launch), collectives on the comm stream, and the waits between them.
 * Schedules say only what runs in which order and what waits for what.
 */
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moesim/models/LayerOps.hpp"
#include "moesim/models/Routing.hpp"
#include "moesim/schedules/Scenario.hpp"
#include "moesim/sim/Program.hpp"

namespace moesim::schedules::detail {

using models::LayerOp;
using models::Pass;
using sim::NO_OP;
using sim::OpId;

/** @brief The comm a layer needs, identical for every schedule of a scenario. */
struct TrafficPlan {
  /// [src][dst] over the EP group, one copy every Dispatch shares (null for the allreduce style)
  std::shared_ptr<const sim::PairBytes> dispatch_bytes;
  std::shared_ptr<const sim::PairBytes> combine_bytes;   ///< transpose of dispatch
  std::vector<std::vector<std::int64_t>> expert_tokens;  ///< [rank][local expert] rows
  std::vector<std::int64_t> routed_rows;                 ///< [rank] rows it permutes
  double allreduce_bytes = 0;                            ///< allreduce style: one layer output
  bool symmetric = false;                                ///< every rank sees identical work and traffic
};

/** @brief Routes the scenario's tokens once (seeded) and derives per-rank work and traffic. */
TrafficPlan plan_traffic(const Scenario& s);

/** @brief The stream indices every rank declares. */
inline constexpr int COMPUTE = 0;
inline constexpr int COMM = 1;
/** @brief Declared by begin_rank(rank, true): TP collectives, on a communicator of their own. */
inline constexpr int TP_COMM = 2;

/** @brief How a layer's Dispatch/Combine all-to-alls run (layer-stack option a2a, a2a_sms). */
struct AllToAllAlgorithm {
  bool hierarchical = false;  ///< DeepEP-style RDMA + NVLink legs across nodes (HierarchicalA2a.hpp)
  int sms = 0;                ///< SMs its kernel holds; 0 = the profile's comm_sms
};

/** @brief Which collective of a layer. */
enum class Comm { DISPATCH, COMBINE, DISPATCH_BWD, COMBINE_BWD, ATTN_ALLREDUCE, MOE_ALLREDUCE };

class ProgramBuilder {
 public:
  /** `all_to_all_transport`: how the layer's Dispatch/Combine move data (NCCL kernels or copy engines). */
  ProgramBuilder(const Scenario& scenario, const TrafficPlan& traffic, sim::Program& program,
                 sim::Transport all_to_all_transport = sim::Transport::SM_KERNEL,
                 AllToAllAlgorithm all_to_all = {});

  /**
   * @brief Emits every simulated rank's program: begin_rank(rank, tp_stream), `emit(rank)`, then what ends a
   * rank's program whatever the schedule: a forward-only phase (`--phase forward`) drops its output, which
   * frees the autograd graph (see free_forward_graph).
   */
  void for_each_rank(bool tp_stream, const std::function<void(int rank)>& emit);
  /** @brief Starts emitting for `rank` (its ops go in host order). */
  void begin_rank(int rank);
  /**
   * @brief As begin_rank(rank), plus a third stream TP_COMM when `tp_stream`: TP collectives then never
   * queue behind the EP all-to-alls of the COMM stream (two NCCL communicators, two streams).
   */
  void begin_rank(int rank, bool tp_stream);
  /**
   * @brief Emits `op`'s kernels for `pass` on the compute stream. The first kernel also waits for
   * `deps` and any pending waits. Returns the last kernel, or NO_OP if the op launches none.
   */
  OpId compute(int layer, LayerOp op, Pass pass, std::vector<OpId> deps = {});
  /** @brief A forward ATTN_NORM or MLP_NORM that also sums `extra_inputs` activation tensors into its input.
   */
  OpId norm(int layer, LayerOp op, int extra_inputs, std::vector<OpId> deps = {});
  /** @brief Emits DGRAD then WGRAD of `op`; returns the last kernel (or NO_OP). */
  OpId backward(int layer, LayerOp op, std::vector<OpId> deps = {});
  /**
   * @brief A model-level op (MODEL_INPUTS, FINAL_NORM) of `pass` (FORWARD, or DGRAD for the whole backward),
   * named after `layer`: only where the implementation profile lists it for that pass (a stack that runs it
   * per step); else nothing, as the in-tree runner. Returns its last kernel (or NO_OP).
   */
  OpId model_op(int layer, LayerOp op, Pass pass, std::vector<OpId> deps = {});
  /** @brief Whether model_op(op, pass) emits anything. */
  bool runs_model_op(LayerOp op, Pass pass) const;
  /**
   * @brief Launches this rank's member of a layer's collective on the comm stream. It waits for
   * `deps` and for the last compute kernel emitted so far (which produced the data it sends).
   */
  OpId collective(int layer, Comm which, std::vector<OpId> deps);
  /**
   * @brief Emits `op`'s kernels for `pass` sized by an explicit `context` (token micro-batches, attention
   * slices with a key prefix, sequence-parallel shares). Kernels are named "L<layer>.<tag>.<kernel>"; the
   * first waits for `deps` and any pending waits; attention of a windowed layer (ModelSpec) runs through its
   * window. Returns the last kernel, or NO_OP.
   */
  OpId compute(int layer, const std::string& tag, LayerOp op, Pass pass, const models::OpContext& context,
               std::vector<OpId> deps = {});
  /** @brief DGRAD then WGRAD of `op` with an explicit context; returns the last kernel (or NO_OP). */
  OpId backward(int layer, const std::string& tag, LayerOp op, const models::OpContext& context,
                std::vector<OpId> deps = {});
  /**
   * @brief Launches this rank's member of an explicitly specified collective on `stream`, waiting for
   * `deps` only (no implicit wait on the last compute kernel). Ranks join the same collective by
   * spec.name; the spec of the first rank that names it is kept.
   */
  OpId collective(sim::CollectiveSpec spec, int stream, const std::string& category, std::vector<OpId> deps,
                  sim::OpOrigin origin);
  /**
   * @brief One memory-bound kernel on `stream` that reads and writes these bytes (e.g. the quantize and
   * dequantize passes of a quantized all-reduce), waiting for `deps` only. Named "L<layer>.<name>".
   */
  OpId memory_kernel(int layer, int stream, const std::string& name, const std::string& category,
                     double read_bytes, double write_bytes, std::vector<OpId> deps);
  /** @brief Host time this rank spends launching `spec` (at the scenario's host speed). */
  double host_ns(const sim::CollectiveSpec& spec) const;
  /** @brief The next compute kernel of this rank will wait for `op` (a stream wait on an event). */
  void wait(OpId op);
  /**
   * @brief The host thread blocks until `op` finishes (Megatron's all-to-all dispatcher copies the
   * routing split sizes to the host before it can launch Dispatch), then pays a small copy. Nothing under an
   * implementation profile: its steps carry the stack's own host syncs.
   */
  void host_sync(int layer, OpId op);
  /**
   * @brief Sequence parallelism's TP collectives around a tensor-parallel block (`block`: "attn" or an MLP's
   * op name) under all-to-all MoE with --tp > 1: an all-gather of the block's input tokens before it
   * (forward; in backward, of the output gradient) waiting for the last compute kernel, on the TP_COMM
   * stream. NO_OP (nothing emitted) without sequence parallelism.
   */
  OpId sequence_gather(int layer, bool backward, const std::string& block);
  /** @brief The reduce-scatter after a tensor-parallel block (backward: of the input gradient); see above. */
  OpId sequence_scatter(int layer, bool backward, const std::string& block);
  /** @brief Attention TP with sequence parallelism: all-to-all MoE and --tp > 1 (Megatron's layout). */
  bool sequence_parallel() const;

  /**
   * @brief Names and origins of the ops emitted from now on belong to micro-batch `micro_batch` (-1: none),
   * their names prefixed by `tag` (e.g. "mb3." or "mb3.b."), so each micro-batch's collectives are distinct.
   */
  void set_micro_batch(int micro_batch, std::string tag);
  /**
   * @brief While on, backward() emits DGRAD only and keeps the WGRAD kernels for flush_wgrad() (zero-bubble
   * schedules such as DualPipe run weight gradients later, in the bubbles). Each switch on opens a group.
   */
  void defer_wgrad(bool on);
  /** @brief Emits the oldest group of deferred WGRAD kernels, in the order they were deferred; returns the
   * last. */
  OpId flush_wgrad();
  /** @brief A bandwidth-bound kernel of `bytes` HBM traffic on the compute stream (the optimizer step). */
  OpId memory_kernel(const std::string& name, const std::string& category, double bytes,
                     std::vector<OpId> deps, sim::OpOrigin origin);
  OpId last_compute() const { return last_compute_; }
  const std::string& name_tag() const { return name_tag_; }
  int micro_batch() const { return micro_batch_; }
  /** @brief Declares another stream on the current rank; returns its index. */
  int add_stream(const std::string& name);
  /**
   * @brief What the ops emitted so far produce: the last compute kernel and every pending wait (collectives
   * the next kernel would have waited for); clears the pending waits.
   */
  std::vector<OpId> take_outputs();
  /** @brief The pending waits alone (what the next kernel would have waited for); clears them. */
  std::vector<OpId> take_waits();
  sim::Program& program() { return program_; }

  int rank() const { return rank_; }
  /** @brief FLOPs of every kernel emitted for `rank` (for MFU). */
  double flops(int rank) const;
  const Scenario& scenario() const { return s_; }
  bool is_moe_layer(int layer) const { return s_.model.is_moe_layer(layer); }

  /**
   * @brief The end of a forward that records autograd and runs no backward: dropping its output frees the
   * graph, host time per forward launch since the last free on this rank (the implementation profile's
   * graph_free_us; nothing without one), named after the highest layer since then. for_each_rank frees a
   * rank's whole forward; a pipeline frees each micro-batch's chunk when it has sent it on.
   */
  void free_forward_graph();

 private:
  models::OpContext context(LayerOp op) const;
  /** @brief `context` with the model's attention window where `op` is attention of a windowed `layer`, else
   * none (the caller keeps its own: no copy of the per-expert rows for every other op). */
  std::optional<models::OpContext> windowed(int layer, LayerOp op, const models::OpContext& context) const;
  OpId add_collective(sim::CollectiveSpec spec, int stream, const std::string& category,
                      std::vector<OpId> deps, sim::OpOrigin origin, double launch_ns);
  sim::CollectiveSpec spec(int layer, Comm which) const;
  /** @brief Both legs of a hierarchical all-to-all and the join that waits for them. */
  OpId hierarchical_collective(int layer, Comm which, std::vector<OpId> deps);
  bool hierarchical_here() const;

  OpId tp_collective(int layer, sim::CollectiveKind kind, bool backward, const std::string& block);
  std::string layer_prefix(int layer) const;
  sim::OpOrigin origin(int layer, bool backward, std::string block) const;

  /** A WGRAD pass kept for flush_wgrad(), with the naming it was deferred under. */
  struct DeferredWgrad {
    int layer;
    std::string tag;
    LayerOp op;
    models::OpContext context;
    std::string name_tag;
    int micro_batch;
  };

  const Scenario& s_;
  const TrafficPlan& traffic_;
  sim::Program& program_;
  double launch_ns_;
  double host_scale_;           ///< forward host costs: host_straggle / the scenario's host speed
  double backward_host_scale_;  ///< backward host costs: 1 / the scenario's host speed
  sim::Transport all_to_all_transport_;
  AllToAllAlgorithm all_to_all_;
  int rank_ = 0;
  int local_ = 0;       ///< rank_'s index in its EP group
  int group_base_ = 0;  ///< the EP group's first rank (pipeline stage s: s·ep)
  std::string name_tag_;
  int micro_batch_ = -1;
  bool defer_wgrad_ = false;
  std::deque<std::vector<DeferredWgrad>> deferred_;
  std::vector<OpId> pending_waits_;
  OpId last_compute_ = NO_OP;
  std::map<int, double> flops_;
  long forward_launches_ = 0;  ///< since the rank's last graph free: the nodes its forward leaves
  int last_layer_ = 0;         ///< ... and the highest layer it emitted an op of
  std::map<std::string, int> collectives_;  ///< by name, so all ranks join the same one
};

/** @brief Name of a collective ("dispatch", "combine.bwd", ...), also its op category. */
std::string to_string(Comm which);

}  // namespace moesim::schedules::detail
