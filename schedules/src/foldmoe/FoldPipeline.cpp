#include "FoldPipeline.hpp"

#include <algorithm>
#include <deque>

#include "ProgramBuilder.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/schedules/FoldMoe.hpp"
#include "moesim/schedules/TimeUniformSlicing.hpp"

namespace moesim::schedules {

namespace detail {

namespace {
constexpr Pass FWD = Pass::FORWARD;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/** The forward host order of the attention-MoE pipelines; `one_by_one` = 1A1M, otherwise aAaM. */
void pipeline_order(FoldPlan& p, bool one_by_one) {
  const auto groups = static_cast<int>(p.group_begin.size());
  int next_group = 0, pending_post = -1;
  std::deque<int> dispatched;
  auto moe = [&](int g) {
    p.order.push_back({FoldStage::EXPERT, g});
    p.order.push_back({FoldStage::COMBINE, g});
    // Unpermute waits for Combine, so it goes one MoE stage later: the compute stream keeps busy meanwhile.
    if (pending_post >= 0) p.order.push_back({FoldStage::POST, pending_post});
    pending_post = g;
  };
  auto end_of_group = [&p](int g) {
    return p.group_begin[static_cast<std::size_t>(g)] + p.group_len[static_cast<std::size_t>(g)];
  };
  for (int s = 0; s < static_cast<int>(p.slice_begin.size()); ++s) {
    p.order.push_back({FoldStage::ATTN, s});
    const auto i = static_cast<std::size_t>(s);
    const std::int64_t produced = p.slice_begin[i] + p.slice_len[i];
    std::vector<int> fresh;
    // The token buffer releases every whole micro-batch the slices so far have produced.
    while (next_group < groups && end_of_group(next_group) <= produced) {
      p.order.push_back({FoldStage::ROUTE, next_group});
      p.order.push_back({FoldStage::DISPATCH, next_group});
      fresh.push_back(next_group++);
    }
    // 1A1M: one MoE stage of a micro-batch dispatched before this slice (its Dispatch ran under the slice).
    if (one_by_one && !dispatched.empty()) {
      moe(dispatched.front());
      dispatched.pop_front();
    }
    dispatched.insert(dispatched.end(), fresh.begin(), fresh.end());
  }
  MOE_CHECK(next_group == groups) << "attention slices do not cover the sequence";
  for (int g : dispatched) moe(g);
  if (pending_post >= 0) p.order.push_back({FoldStage::POST, pending_post});
}
}  // namespace

bool FoldPlan::overlaps(int slice, int group) const {
  const auto s = static_cast<std::size_t>(slice), g = static_cast<std::size_t>(group);
  return slice_begin[s] < group_begin[g] + group_len[g] && group_begin[g] < slice_begin[s] + slice_len[s];
}

FoldPlan make_fold_plan(FoldStyle style, std::int64_t seq_len, int degree, std::int64_t hidden,
                        std::int64_t heads) {
  FoldPlan p;
  p.degree = style == FoldStyle::WHOLE ? 1 : degree;
  const int d = p.degree;
  MOE_CHECK(d >= 1 && seq_len % d == 0) << "degree " << d << " must divide seq " << seq_len;
  const std::int64_t micro_batch = seq_len / d;
  std::vector<std::int64_t> slices;
  if (style == FoldStyle::ONE_BY_ONE_UNIFORM) {
    slices = time_uniform_slices(seq_len, d, hidden, heads);
  } else if (style == FoldStyle::ALL_THEN_ALL || style == FoldStyle::ONE_BY_ONE) {
    slices.assign(static_cast<std::size_t>(d), micro_batch);
  } else {
    slices = {seq_len};  // WHOLE, MOE_ONLY: attention runs whole
  }
  std::int64_t at = 0;
  for (std::int64_t len : slices) {
    p.slice_begin.push_back(at);
    p.slice_len.push_back(len);
    at += len;
  }
  if (style == FoldStyle::MOE_ONLY) {
    // Tutel routes the whole batch once and pipelines only Dispatch/experts/Combine over d chunks.
    p.group_begin = {0};
    p.group_len = {seq_len};
    p.chunk_group.assign(static_cast<std::size_t>(d), 0);
    p.order = {{FoldStage::ATTN, 0}, {FoldStage::ROUTE, 0}, {FoldStage::DISPATCH, 0}};
    for (int k = 1; k < d; ++k) {
      p.order.push_back({FoldStage::DISPATCH, k});
      p.order.push_back({FoldStage::EXPERT, k - 1});
      p.order.push_back({FoldStage::COMBINE, k - 1});
    }
    p.order.push_back({FoldStage::EXPERT, d - 1});
    p.order.push_back({FoldStage::COMBINE, d - 1});
    p.order.push_back({FoldStage::POST, 0});
    return p;
  }
  for (int k = 0; k < d; ++k) {
    p.group_begin.push_back(k * micro_batch);
    p.group_len.push_back(micro_batch);
    p.chunk_group.push_back(k);
  }
  pipeline_order(p, style != FoldStyle::ALL_THEN_ALL);
  return p;
}

namespace {

/** Emits the blocks of one rank. */
class FoldEmitter {
 public:
  FoldEmitter(ProgramBuilder& b, const Scenario& s, const FoldPlan& plan, const TrafficPlan& group_traffic)
      : b_(b), s_(s), plan_(plan), traffic_(group_traffic) {
    tp_ = s.parallel.tp;
    sequences_ = s.workload.tokens / s.workload.seq_len;
    chunks_per_group_ = static_cast<int>(plan.chunk_group.size() / plan.group_begin.size());
    activation_bytes_ =
        static_cast<double>(s.model.hidden) * std::max(models::bytes_per_element(s.workload.dtype), 2);
    core_r09_ = is_core_r09_layout(s);
  }

  void forward(int layer) {
    if (b_.is_moe_layer(layer)) {
      moe_forward(layer);
    } else {
      dense_forward(layer);
    }
  }

  void backward(int layer) {
    if (b_.is_moe_layer(layer)) {
      moe_backward(layer);
    } else {
      dense_backward(layer);
    }
  }

 private:
  models::OpContext context(std::int64_t tokens) const {
    models::OpContext c;
    c.tokens = tokens;
    c.seq_len = s_.workload.seq_len;
    c.dtype = s_.workload.dtype;
    c.tp = tp_;
    return c;
  }
  /** Tokens of a slice across the TP group (the whole sequences' share of it). */
  std::int64_t full_tokens(std::int64_t len) const { return sequences_ * len; }
  /** One rank's sequence-parallel share. */
  std::int64_t sp_tokens(std::int64_t len) const { return ceil_div(full_tokens(len), tp_); }
  std::int64_t group_tokens() const { return sp_tokens(plan_.group_len.front()); }
  std::int64_t group_rows() const { return traffic_.routed_rows[static_cast<std::size_t>(b_.rank())]; }

  models::OpContext router_context() const {
    auto c = context(group_tokens());
    c.routed_rows = group_rows();
    return c;
  }

  models::OpContext expert_context() const {
    auto c = context(0);
    if (core_r09_) {
      // Every expert of this TP group, its columns split tp ways: the FLOPs of 1/tp of its rows (as the
      // dense FFN's TP), after Megatron's sort of the gathered rows by expert.
      for (int dst : tp_group_ranks())
        for (std::int64_t rows : traffic_.expert_tokens[static_cast<std::size_t>(dst)])
          c.expert_tokens.push_back(ceil_div(rows, tp_));
      c.regroup_by_expert = true;
    } else {
      for (std::int64_t rows : traffic_.expert_tokens[static_cast<std::size_t>(b_.rank())])
        c.expert_tokens.push_back(ceil_div(rows, chunks_per_group_));
    }
    c.experts_total_local = static_cast<int>(c.expert_tokens.size());
    return c;
  }

  /** The ranks of this rank's TP group. */
  std::vector<int> tp_group_ranks() const {
    std::vector<int> ranks;
    for (int r = b_.rank() / tp_ * tp_; r < (b_.rank() / tp_ + 1) * tp_; ++r) ranks.push_back(r);
    return ranks;
  }

  /** Rows the experts of this rank's TP group receive: what the core-r0.9 TP all-gather collects. */
  std::int64_t tp_group_expert_rows() const {
    std::int64_t rows = 0;
    for (int dst : tp_group_ranks()) {
      for (std::int64_t r : traffic_.expert_tokens[static_cast<std::size_t>(dst)]) rows += r;
    }
    return rows;
  }

  /** Core attention of the `len` tokens at `begin`: their queries see `begin` earlier keys too. */
  models::OpContext core_context(std::int64_t begin, std::int64_t len) const {
    auto c = context(full_tokens(len));
    c.seq_len = len;
    c.prefix_len = begin;
    return c;
  }

  /** The TP group's all-gather or reduce-scatter of `full` tokens for the sub-block `label` of `layer`. */
  OpId tp_collective(int layer, const std::string& label, sim::CollectiveKind kind, bool backward,
                     std::int64_t full, std::vector<OpId> deps) {
    if (tp_ == 1) return NO_OP;
    sim::CollectiveSpec c;
    const int group = b_.rank() / tp_;
    const std::string category =
        kind == sim::CollectiveKind::ALL_GATHER ? "tp_allgather" : "tp_reducescatter";
    c.name = tag(label, layer) + "." + category + (backward ? ".bwd" : "") + ".g" + std::to_string(group);
    c.kind = kind;
    for (int r = group * tp_; r < (group + 1) * tp_; ++r) c.group.push_back(r);
    c.bytes = static_cast<double>(full) * activation_bytes_;  // nccl-tests size: the gathered buffer
    return b_.collective(std::move(c), TP_COMM, category, std::move(deps), {layer, backward, category});
  }

  OpId all_to_all(int layer, int chunk, bool dispatch_bytes, const std::string& what, bool backward,
                  OpId dep) {
    sim::CollectiveSpec c;
    c.name = "L" + std::to_string(layer) + ".mb" + std::to_string(chunk) + "." + what;
    c.kind = sim::CollectiveKind::ALL_TO_ALL;
    for (int r = 0; r < s_.parallel.ep; ++r) c.group.push_back(r);
    c.pair_bytes = *(dispatch_bytes ? traffic_.dispatch_bytes : traffic_.combine_bytes);
    for (auto& row : c.pair_bytes) {
      for (double& v : row) v /= chunks_per_group_;
    }
    MOE_CHECK(dep != NO_OP) << c.name << " has nothing to send";
    return b_.collective(std::move(c), COMM, what, {dep}, {layer, backward, what});
  }

  /**
   * Megatron-Core r0.9's Dispatch or Combine: an all-to-all among the ep/tp ranks with this rank's place in
   * their TP groups (its EP group), each sending the rows for the experts of the other TP groups.
   */
  OpId lane_all_to_all(int layer, bool dispatch_bytes, const std::string& what, bool backward, OpId dep) {
    const int lane = b_.rank() % tp_, groups = s_.parallel.ep / tp_;
    sim::CollectiveSpec c;
    c.name = "L" + std::to_string(layer) + "." + what + ".lane" + std::to_string(lane);
    c.kind = sim::CollectiveKind::ALL_TO_ALL;
    c.pair_bytes.assign(static_cast<std::size_t>(groups),
                        std::vector<double>(static_cast<std::size_t>(groups), 0));
    for (int i = 0; i < groups; ++i) {
      c.group.push_back(lane + i * tp_);
      for (int j = 0; j < groups; ++j) {
        double bytes = 0;  // rows of sender (lane, i) for TP group j's experts
        for (int dst = j * tp_; dst < (j + 1) * tp_; ++dst)
          bytes += (*traffic_.dispatch_bytes)[static_cast<std::size_t>(lane + i * tp_)]
                                             [static_cast<std::size_t>(dst)];
        // Combine returns each Dispatch's rows: the transpose.
        (dispatch_bytes ? c.pair_bytes[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]
                        : c.pair_bytes[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)]) = bytes;
      }
    }
    return b_.collective(std::move(c), COMM, what, {dep}, {layer, backward, what});
  }

  /** Dispatch (or the Combine gradient, which travels alike) of a chunk: the EP all-to-all, and with
   * core-r0.9 the TP all-gather of what it brought. */
  OpId moe_dispatch(int layer, int chunk, const std::string& what, bool backward, OpId dep) {
    if (!core_r09_) return all_to_all(layer, chunk, true, what, backward, dep);
    const OpId moved = lane_all_to_all(layer, true, what, backward, dep);
    const OpId gathered = tp_collective(layer, "moe", sim::CollectiveKind::ALL_GATHER, backward,
                                        tp_group_expert_rows(), {moved});
    return gathered == NO_OP ? moved : gathered;
  }

  /** Combine (or the Dispatch gradient) of a chunk: with core-r0.9 the TP reduce-scatter of the experts'
   * partial sums first. */
  OpId moe_combine(int layer, int chunk, const std::string& what, bool backward, OpId dep) {
    if (!core_r09_) return all_to_all(layer, chunk, false, what, backward, dep);
    const OpId scattered = tp_collective(layer, "moe", sim::CollectiveKind::REDUCE_SCATTER, backward,
                                         tp_group_expert_rows(), {dep});
    return lane_all_to_all(layer, false, what, backward, scattered == NO_OP ? dep : scattered);
  }

  static std::string slice_tag(int s) { return "s" + std::to_string(s); }
  static std::string group_tag(int g) { return "r" + std::to_string(g); }
  static std::string chunk_tag(int k) { return "mb" + std::to_string(k); }
  static std::string tag(const std::string& prefix, int layer) {
    return "L" + std::to_string(layer) + "." + prefix;
  }

  /** Attention of the slice [begin, begin + len) under TP+SP: returns its output and sets *qkv. */
  OpId attention_forward(int layer, const std::string& label, std::int64_t begin, std::int64_t len,
                         OpId previous_qkv, OpId* qkv) {
    OpId norm = b_.compute(layer, label, LayerOp::ATTN_NORM, FWD, context(sp_tokens(len)));
    OpId gathered =
        tp_collective(layer, label, sim::CollectiveKind::ALL_GATHER, false, full_tokens(len), {norm});
    *qkv = b_.compute(layer, label, LayerOp::ATTN_QKV, FWD, context(full_tokens(len)), {gathered});
    // Keys and values of the earlier slices (Figure 4's inter-micro-batch dependency).
    b_.compute(layer, label, LayerOp::ATTN_CORE, FWD, core_context(begin, len), {*qkv, previous_qkv});
    OpId out = b_.compute(layer, label, LayerOp::ATTN_OUT, FWD, context(full_tokens(len)));
    OpId scattered =
        tp_collective(layer, label, sim::CollectiveKind::REDUCE_SCATTER, false, full_tokens(len), {out});
    return b_.compute(layer, label, LayerOp::RESIDUAL_ADD, FWD, context(sp_tokens(len)), {scattered});
  }

  /**
   * Gradient of attention_forward; `ready` = what the output gradient waits for. Sets *core to the core
   * attention gradient and returns the input gradient (the slice's last kernel).
   */
  OpId attention_backward(int layer, const std::string& label, std::int64_t begin, std::int64_t len,
                          std::vector<OpId> ready, OpId later_core, OpId* core) {
    OpId gathered =
        tp_collective(layer, label, sim::CollectiveKind::ALL_GATHER, true, full_tokens(len), ready);
    if (gathered != NO_OP) ready = {gathered};
    b_.backward(layer, label, LayerOp::ATTN_OUT, context(full_tokens(len)), ready);
    *core = b_.backward(layer, label, LayerOp::ATTN_CORE, core_context(begin, len));
    // dK/dV of this slice's keys also come from every later slice's core attention gradient.
    OpId qkv = b_.backward(layer, label, LayerOp::ATTN_QKV, context(full_tokens(len)), {later_core});
    OpId scattered =
        tp_collective(layer, label, sim::CollectiveKind::REDUCE_SCATTER, true, full_tokens(len), {qkv});
    return b_.backward(layer, label, LayerOp::ATTN_NORM, context(sp_tokens(len)), {scattered});
  }

  void moe_forward(int layer) {
    const auto slices = plan_.slice_begin.size(), groups = plan_.group_begin.size();
    const auto chunks = plan_.chunk_group.size();
    std::vector<OpId> attn(slices, NO_OP), qkv(slices, NO_OP), routed(groups, NO_OP);
    std::vector<OpId> dispatch(chunks, NO_OP), experts(chunks, NO_OP), combine(chunks, NO_OP);
    auto need = [](OpId id, const char* what) {
      MOE_CHECK(id != NO_OP) << "foldmoe plan emits " << what << " before what it needs";
      return id;
    };
    for (const FoldStep& step : plan_.order) {
      const auto i = static_cast<std::size_t>(step.index);
      switch (step.stage) {
        case FoldStage::ATTN:
          attn[i] = attention_forward(layer, slice_tag(step.index), plan_.slice_begin[i], plan_.slice_len[i],
                                      i > 0 ? need(qkv[i - 1], "qkv") : NO_OP, &qkv[i]);
          break;
        case FoldStage::ROUTE: {
          std::vector<OpId> inputs;  // the token buffer: every slice holding tokens of this group
          for (std::size_t sl = 0; sl < slices; ++sl) {
            if (plan_.overlaps(static_cast<int>(sl), step.index))
              inputs.push_back(need(attn[sl], "attention"));
          }
          const std::string label = group_tag(step.index);
          b_.compute(layer, label, LayerOp::MLP_NORM, FWD, context(group_tokens()), inputs);
          b_.compute(layer, label, LayerOp::GATE, FWD, context(group_tokens()));
          routed[i] = b_.compute(layer, label, LayerOp::PERMUTE, FWD, router_context());
          break;
        }
        case FoldStage::DISPATCH:
          dispatch[i] = moe_dispatch(layer, step.index, "dispatch", false,
                                     need(routed[static_cast<std::size_t>(plan_.chunk_group[i])], "permute"));
          break;
        case FoldStage::EXPERT:
          experts[i] = b_.compute(layer, chunk_tag(step.index), LayerOp::ROUTED_EXPERTS, FWD,
                                  expert_context(), {need(dispatch[i], "dispatch")});
          break;
        case FoldStage::COMBINE:
          combine[i] = moe_combine(layer, step.index, "combine", false, need(experts[i], "experts"));
          break;
        case FoldStage::POST: {
          std::vector<OpId> inputs;
          for (std::size_t k = 0; k < chunks; ++k) {
            if (plan_.chunk_group[k] == step.index) inputs.push_back(need(combine[k], "combine"));
          }
          const std::string label = group_tag(step.index);
          b_.compute(layer, label, LayerOp::UNPERMUTE, FWD, router_context(), inputs);
          previous_block_ = b_.compute(layer, label, LayerOp::RESIDUAL_ADD, FWD, context(group_tokens()));
          break;
        }
      }
    }
  }

  void moe_backward(int layer) {
    const auto slices = plan_.slice_begin.size(), groups = plan_.group_begin.size();
    const auto chunks = plan_.chunk_group.size();
    std::vector<OpId> core(slices, NO_OP), router(groups, NO_OP), post(groups, NO_OP);
    std::vector<OpId> combine(chunks, NO_OP), experts(chunks, NO_OP), dispatch(chunks, NO_OP);
    auto need = [](OpId id, const char* what) {
      MOE_CHECK(id != NO_OP) << "foldmoe backward plan emits " << what << " late";
      return id;
    };
    for (auto it = plan_.order.rbegin(); it != plan_.order.rend(); ++it) {
      const auto i = static_cast<std::size_t>(it->index);
      switch (it->stage) {
        case FoldStage::POST:
          post[i] = b_.backward(layer, group_tag(it->index), LayerOp::UNPERMUTE, router_context());
          break;
        case FoldStage::COMBINE:  // its gradient travels like Dispatch: token owners → experts
          combine[i] =
              moe_dispatch(layer, it->index, "combine.bwd", true,
                           need(post[static_cast<std::size_t>(plan_.chunk_group[i])], "unpermute grad"));
          break;
        case FoldStage::EXPERT:
          experts[i] = b_.backward(layer, chunk_tag(it->index), LayerOp::ROUTED_EXPERTS, expert_context(),
                                   {need(combine[i], "combine grad")});
          break;
        case FoldStage::DISPATCH:
          dispatch[i] = moe_combine(layer, it->index, "dispatch.bwd", true, need(experts[i], "expert grad"));
          break;
        case FoldStage::ROUTE: {
          std::vector<OpId> inputs;
          for (std::size_t k = 0; k < chunks; ++k) {
            if (plan_.chunk_group[k] == it->index) inputs.push_back(need(dispatch[k], "dispatch grad"));
          }
          const std::string label = group_tag(it->index);
          b_.backward(layer, label, LayerOp::PERMUTE, router_context(), inputs);
          b_.backward(layer, label, LayerOp::GATE, context(group_tokens()));
          router[i] = b_.backward(layer, label, LayerOp::MLP_NORM, context(group_tokens()));
          break;
        }
        case FoldStage::ATTN: {
          std::vector<OpId> inputs;
          for (std::size_t g = 0; g < groups; ++g) {
            if (plan_.overlaps(it->index, static_cast<int>(g)))
              inputs.push_back(need(router[g], "router grad"));
          }
          const OpId later = i + 1 < slices ? need(core[i + 1], "later core grad") : NO_OP;
          previous_block_ = attention_backward(layer, slice_tag(it->index), plan_.slice_begin[i],
                                               plan_.slice_len[i], inputs, later, &core[i]);
          break;
        }
      }
    }
  }

  /** A dense block runs whole: attention, then the TP+SP MLP (all-gather, column/row GEMMs, reduce-scatter).
   */
  void dense_forward(int layer) {
    const std::int64_t L = s_.workload.seq_len;
    OpId qkv = NO_OP;
    attention_forward(layer, "dense", 0, L, NO_OP, &qkv);
    OpId norm = b_.compute(layer, "dense", LayerOp::MLP_NORM, FWD, context(sp_tokens(L)));
    OpId gathered =
        tp_collective(layer, "ffn", sim::CollectiveKind::ALL_GATHER, false, full_tokens(L), {norm});
    // Columns split tp ways: the FLOPs of 1/tp of the tokens (as ProgramBuilder::context does).
    OpId ffn = b_.compute(layer, "dense", LayerOp::DENSE_FFN, FWD, context(sp_tokens(L)), {gathered});
    OpId scattered =
        tp_collective(layer, "ffn", sim::CollectiveKind::REDUCE_SCATTER, false, full_tokens(L), {ffn});
    previous_block_ =
        b_.compute(layer, "dense", LayerOp::RESIDUAL_ADD, FWD, context(sp_tokens(L)), {scattered});
  }

  void dense_backward(int layer) {
    const std::int64_t L = s_.workload.seq_len;
    // The output gradient is the input gradient of the block above (the last kernel it ran).
    OpId gathered =
        tp_collective(layer, "ffn", sim::CollectiveKind::ALL_GATHER, true, full_tokens(L), {previous_block_});
    OpId ffn = b_.backward(layer, "dense", LayerOp::DENSE_FFN, context(sp_tokens(L)), {gathered});
    OpId scattered =
        tp_collective(layer, "ffn", sim::CollectiveKind::REDUCE_SCATTER, true, full_tokens(L), {ffn});
    OpId norm = b_.backward(layer, "dense", LayerOp::MLP_NORM, context(sp_tokens(L)), {scattered});
    OpId core = NO_OP;
    previous_block_ = attention_backward(layer, "dense", 0, L, {norm}, NO_OP, &core);
  }

  ProgramBuilder& b_;
  const Scenario& s_;
  const FoldPlan& plan_;
  const TrafficPlan& traffic_;
  OpId previous_block_ = NO_OP;  ///< the last kernel of the block emitted before (its output)
  int tp_ = 1;
  std::int64_t sequences_ = 1;
  int chunks_per_group_ = 1;
  double activation_bytes_ = 2;
  bool core_r09_ = false;  ///< Megatron-Core r0.9's MoE layout (FoldPipeline.hpp)
};

}  // namespace

BuiltProgram build_foldmoe(const Scenario& s, FoldStyle style) {
  FoldPlan plan =
      make_fold_plan(style, s.workload.seq_len, s.degree, s.model.hidden, s.model.attention.heads);
  // Route one router group's tokens per rank (all groups have the same size); chunks split it evenly.
  Scenario group = s;
  group.workload.tokens = s.workload.tokens / s.workload.seq_len * plan.group_len.front() / s.parallel.tp;
  group.parallel.tp = 1;
  TrafficPlan traffic = plan_traffic(group);
  BuiltProgram out;
  out.degree = plan.degree;
  out.program = std::make_shared<sim::Program>(s.parallel.ep, traffic.symmetric);
  ProgramBuilder b(s, traffic, *out.program);
  const int layers = simulated_layers(s);
  b.for_each_rank(s.parallel.tp > 1, [&](int) {
    FoldEmitter emit(b, s, plan, traffic);
    for (int l = 0; l < layers; ++l) emit.forward(l);
    if (s.workload.phase == Phase::TRAIN)
      for (int l = layers - 1; l >= 0; --l) emit.backward(l);
  });
  out.flops_rank0 = b.flops(0);
  out.layers = layers;
  // workload.tokens belong to one TP group, and the EP group holds ep/tp of them.
  out.tokens_per_step = static_cast<double>(s.workload.tokens) * (s.parallel.ep / s.parallel.tp);
  return out;
}

}  // namespace detail
}  // namespace moesim::schedules
