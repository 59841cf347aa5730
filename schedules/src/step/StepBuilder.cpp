#include "StepBuilder.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "Chunks.hpp"
#include "DataParallel.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::schedules::detail {

std::vector<LayerRange> split_layers(int layers, int parts) {
  std::vector<LayerRange> ranges;
  for (int p = 0; p < parts; ++p) ranges.push_back({layers * p / parts, layers * (p + 1) / parts});
  return ranges;
}

double completed_tokens_per_rank(const Scenario& s) {
  const auto& w = s.workload;
  if (w.phase != Phase::DECODE) return static_cast<double>(w.tokens);
  return static_cast<double>(w.tokens / w.seq_len) * (w.mtp ? 1.0 + w.mtp_accept : 1.0);
}

namespace {

using Kind = PipelineAction::Kind;

/** Which chunk's output: (micro-batch, part, backward, EP index). */
using ChunkKey = std::tuple<int, int, bool, int>;

/*
 * One step, rank by rank. A chunk that needs another chunk's output (the previous part's activations in
 * forward, the next part's gradients in backward) waits for a point-to-point TRANSFER from the rank that ran
 * it; the transfer's own wait on that chunk is added once every rank is built (ranks are built one after the
 * other, so the producer may come later).
 *
 *   stage 0 (rank 0):  F(mb0, part 0) ─► transfer ─► stage 1 (rank ep): F(mb0, part 1) ...
 *                                                     B(mb0, part 1) ─► transfer ─► stage 0: B(mb0, part 0)
 */
class StepEmitter {
 public:
  StepEmitter(const Scenario& s, const PipelineSchedule& pipe, const ChunkEmitter& chunks,
              sim::Program& program, int replicas)
      : s_(s),
        pipe_(pipe),
        chunks_(chunks),
        program_(program),
        b_(chunks.scenario(), chunks.traffic(), program, chunks.transport(), chunks.all_to_all()),
        replicas_(replicas),
        parts_(split_layers(simulated_layers(s), pipe.parts(s))) {}

  void rank(int stage, int local) {
    const int E = s_.parallel.ep;
    stage_ = stage;
    local_ = local;
    rank_ = stage * E + local;
    b_.begin_rank(rank_, b_.sequence_parallel());
    p2p_stream_ = b_.add_stream("p2p");
    const std::vector<PipelineAction> order = pipe_.order(s_, stage);
    // The part each slot holds, the order the rank first runs them, and each slot's last backward.
    std::vector<LayerRange> held;
    std::vector<int> first_use;
    std::map<int, std::size_t> last_backward;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const PipelineAction& a = order[i];
      if (a.kind == Kind::WEIGHT) continue;
      const int slot = a.slot;
      if (static_cast<int>(held.size()) <= slot) held.resize(static_cast<std::size_t>(slot) + 1);
      if (std::find(first_use.begin(), first_use.end(), slot) == first_use.end()) {
        first_use.push_back(slot);
        held[static_cast<std::size_t>(slot)] = range(a.micro_batch, slot);
      }
      if (a.kind == Kind::BACKWARD) last_backward[slot] = i;
      if (a.kind == Kind::FORWARD_BACKWARD) last_backward[a.backward_slot] = i;
    }
    DataParallel dp(b_, held, replicas_);
    dp.start(first_use);
    LayerHooks forward_hooks;
    forward_hooks.before_forward = [&dp](int l) { dp.before_forward(l); };
    LayerHooks final_hooks = forward_hooks;
    final_hooks.after_backward = [&dp](int l) { dp.gradients_ready(l); };
    std::deque<std::pair<LayerRange, bool>> deferred;  // zero-bubble backward chunks: (layers, last of slot)
    for (std::size_t i = 0; i < order.size(); ++i) {
      const PipelineAction& a = order[i];
      const bool last = a.kind != Kind::FORWARD && a.kind != Kind::WEIGHT &&
                        last_backward[a.kind == Kind::BACKWARD ? a.slot : a.backward_slot] == i;
      switch (a.kind) {
        case Kind::FORWARD:
          forward(a.slot, a.micro_batch, forward_hooks);
          break;
        case Kind::BACKWARD: {
          const bool hooked = last && !a.defer_wgrad;
          backward(a.slot, a.micro_batch, a.defer_wgrad, hooked ? final_hooks : forward_hooks);
          if (a.defer_wgrad) deferred.emplace_back(range(a.micro_batch, a.slot), last);
          break;
        }
        case Kind::WEIGHT: {
          MOE_CHECK(!deferred.empty()) << pipe_.name << ": a weight pass with no deferred backward";
          b_.flush_wgrad();
          auto [layers, was_last] = deferred.front();
          deferred.pop_front();
          if (was_last) {
            for (int l = layers.last - 1; l >= layers.first; --l) dp.gradients_ready(l);
          }
          break;
        }
        case Kind::FORWARD_BACKWARD:
          pair(a, last ? final_hooks : forward_hooks);
          break;
      }
    }
    MOE_CHECK(deferred.empty()) << pipe_.name << ": weight gradients deferred and never run";
    dp.finish();
  }

  /** Makes every transfer wait for the chunk whose output it carries. */
  void wire() {
    for (const auto& [transfer, key] : transfers_) {
      auto it = outputs_.find(key);
      MOE_CHECK(it != outputs_.end()) << "pipeline '" << pipe_.name << "': micro-batch " << std::get<0>(key)
                                      << " part " << std::get<1>(key) << " is received but never run";
      for (OpId op : it->second) program_.add_dependency(transfer, op);
    }
  }

  double flops() const {
    double total = 0;
    for (int r : program_.simulated_ranks()) total += b_.flops(r);
    return total / static_cast<double>(program_.simulated_ranks().size());
  }

 private:
  LayerRange range(int micro_batch, int slot) const {
    return parts_[static_cast<std::size_t>(pipe_.part_at(s_, micro_batch, stage_, slot))];
  }

  std::string tag(int micro_batch) const {
    return s_.workload.micro_batches > 1 ? "mb" + std::to_string(micro_batch) + "." : "";
  }

  /** Activations (or their gradients) of one micro-batch on one rank: 16-bit, 1/tp under sequence
   * parallelism. */
  double transfer_bytes() const {
    const double tokens =
        static_cast<double>(s_.workload.tokens) / (b_.sequence_parallel() ? s_.parallel.tp : 1);
    return tokens * s_.model.hidden * std::max(models::bytes_per_element(s_.workload.dtype), 2);
  }

  /** The transfer bringing this chunk's input (NO_OP for the first part forward and the last backward). */
  OpId receive(int micro_batch, int slot, bool backward) {
    const int part = pipe_.part_at(s_, micro_batch, stage_, slot);
    const int from_part = backward ? part + 1 : part - 1;
    if (from_part < 0 || from_part >= static_cast<int>(parts_.size())) return NO_OP;
    const PipelinePlace from = pipe_.place(s_, micro_batch, from_part);
    const int source = from.stage * s_.parallel.ep + local_;
    const auto& topology_gpus = s_.hw.node.gpus_per_node;
    const bool same_node = source / topology_gpus == rank_ / topology_gpus;
    const double latency_ns =
        source == rank_ ? 0.0 : (same_node ? s_.hw.node.fabric.latency_s : s_.hw.network.latency_s) * 1e9;
    sim::OpOrigin origin{-1, backward, backward ? "p2p_grad" : "p2p_act"};
    origin.micro_batch = micro_batch;
    const OpId t = program_.add_transfer(
        source, rank_,
        tag(micro_batch) + "p2p." + (backward ? "grad" : "act") + ".part" + std::to_string(from_part),
        origin.block, transfer_bytes(), sim::Transport::SM_KERNEL, latency_ns, {}, origin, p2p_stream_);
    transfers_.emplace_back(t, ChunkKey{micro_batch, from_part, backward, local_});
    return t;
  }

  void record(int micro_batch, int slot, bool backward, std::vector<OpId> outputs) {
    const int part = pipe_.part_at(s_, micro_batch, stage_, slot);
    outputs_[ChunkKey{micro_batch, part, backward, local_}] = std::move(outputs);
  }

  void forward(int slot, int micro_batch, const LayerHooks& hooks) {
    b_.set_micro_batch(micro_batch, tag(micro_batch));
    b_.wait(receive(micro_batch, slot, false));
    chunks_.emit(b_, {range(micro_batch, slot), false}, hooks);
    record(micro_batch, slot, false, b_.take_outputs());
    if (s_.workload.phase == Phase::FORWARD) b_.free_forward_graph();
  }

  void backward(int slot, int micro_batch, bool defer_wgrad, const LayerHooks& hooks) {
    b_.set_micro_batch(micro_batch, tag(micro_batch));
    b_.wait(receive(micro_batch, slot, true));
    b_.defer_wgrad(defer_wgrad);
    chunks_.emit(b_, {range(micro_batch, slot), true}, hooks);
    b_.defer_wgrad(false);
    record(micro_batch, slot, true, b_.take_outputs());
  }

  void pair(const PipelineAction& a, const LayerHooks& hooks) {
    ChunkCall f{{range(a.micro_batch, a.slot), false}, a.micro_batch, tag(a.micro_batch), {}};
    ChunkCall g{{range(a.backward_micro_batch, a.backward_slot), true},
                a.backward_micro_batch,
                tag(a.backward_micro_batch),
                {}};
    f.entry = {receive(a.micro_batch, a.slot, false)};
    g.entry = {receive(a.backward_micro_batch, a.backward_slot, true)};
    auto [forward_out, backward_out] = chunks_.emit_pair(b_, f, g, hooks);
    record(a.micro_batch, a.slot, false, std::move(forward_out));
    record(a.backward_micro_batch, a.backward_slot, true, std::move(backward_out));
  }

  const Scenario& s_;
  const PipelineSchedule& pipe_;
  const ChunkEmitter& chunks_;
  sim::Program& program_;
  ProgramBuilder b_;
  int replicas_;
  std::vector<LayerRange> parts_;
  int stage_ = 0, local_ = 0, rank_ = 0, p2p_stream_ = -1;
  std::map<ChunkKey, std::vector<OpId>> outputs_;
  std::vector<std::pair<OpId, ChunkKey>> transfers_;
};

/** Tokens one pipeline replica completes per step (decode: output tokens, MTP's accepted drafts included). */
double step_tokens(const Scenario& s) {
  // All-to-all MoE: every TP group of the EP group holds its own tokens; all-reduce MoE replicates them.
  const int holders = s.parallel.moe_comm == MoeComm::ALLREDUCE ? 1 : s.parallel.ep / s.parallel.tp;
  return completed_tokens_per_rank(s) * holders * s.workload.micro_batches;
}

}  // namespace

BuiltProgram build_step(const Scenario& s, const std::shared_ptr<const ChunkEmitter>& chunks) {
  const PipelineSchedule& pipe = find_pipeline_schedule(s.pp_schedule);
  bool has_pairs = false;
  for (int stage = 0; stage < s.parallel.pp; ++stage) {
    for (const PipelineAction& a : pipe.order(s, stage))
      has_pairs = has_pairs || a.kind == Kind::FORWARD_BACKWARD;
  }
  if (has_pairs && !chunks->pairs())
    throw ScheduleError(
        "--schedule " + s.schedule +
        " cannot interleave a forward and a backward chunk (--fb-overlap, --pp-schedule dualpipe)");
  const int E = s.parallel.ep, P = s.parallel.pp;
  const int replicas = s.optimizer != Optimizer::NONE ? s.parallel.dp : 1;
  const int world = E * P * replicas;
  const bool symmetric = chunks->traffic().symmetric;
  std::vector<int> representative(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    const int in_replica = r % (E * P);
    representative[static_cast<std::size_t>(r)] = symmetric ? in_replica - in_replica % E : in_replica;
  }
  BuiltProgram out;
  out.program = std::make_shared<sim::Program>(world, std::move(representative));
  StepEmitter emit(s, pipe, *chunks, *out.program, replicas);
  for (int stage = 0; stage < P; ++stage) {
    for (int local = 0; local < (symmetric ? 1 : E); ++local) emit.rank(stage, local);
  }
  emit.wire();
  out.flops_rank0 = emit.flops();
  out.layers = simulated_layers(s);
  out.tokens_per_step = step_tokens(s);
  return out;
}

}  // namespace moesim::schedules::detail
