#include "ProgramBuilder.hpp"

#include <algorithm>
#include <numeric>

#include "HierarchicalA2a.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/cost/CostModel.hpp"
#include "moesim/cost/OpKernels.hpp"

namespace moesim::schedules::detail {

std::string to_string(Comm which) {
  switch (which) {
    case Comm::DISPATCH:
      return "dispatch";
    case Comm::COMBINE:
      return "combine";
    case Comm::DISPATCH_BWD:
      return "dispatch.bwd";
    case Comm::COMBINE_BWD:
      return "combine.bwd";
    case Comm::ATTN_ALLREDUCE:
      return "attn_allreduce";
    case Comm::MOE_ALLREDUCE:
      return "moe_allreduce";
  }
  return "?";
}

namespace {
/** Breakdown categories: what a person reading a timeline calls each sub-block. */
std::string category(LayerOp op) {
  switch (op) {
    case LayerOp::ATTN_NORM:
    case LayerOp::ATTN_QKV:
    case LayerOp::ATTN_CORE:
    case LayerOp::ATTN_OUT:
      return "attention";
    case LayerOp::MLP_NORM:
    case LayerOp::GATE:
      return "gate";
    case LayerOp::PERMUTE:
    case LayerOp::UNPERMUTE:
      return "permute";
    case LayerOp::ROUTED_EXPERTS:
      return "routed_experts";
    case LayerOp::SHARED_EXPERTS:
      return "shared_experts";
    case LayerOp::DENSE_FFN:
      return "dense_ffn";
    case LayerOp::RESIDUAL_ADD:
      return "residual";
    case LayerOp::MODEL_INPUTS:
    case LayerOp::FINAL_NORM:
      return "model";
  }
  return "other";
}

std::vector<std::vector<double>> transpose(const std::vector<std::vector<double>>& m) {
  std::vector<std::vector<double>> t(m.size(), std::vector<double>(m.size()));
  for (std::size_t i = 0; i < m.size(); ++i) {
    for (std::size_t j = 0; j < m.size(); ++j) t[j][i] = m[i][j];
  }
  return t;
}
// Host costs per forward op: the profile's over the host's speed, and, for an eager stack whose ranks meet at
// every collective of the EP group, times what waiting for the slowest rank's host adds (measured on Python's
// issue of forward ops; autograd's engine issues the backward).
double host_scale(const Scenario& s) {
  return host_straggle(s) / s.host_speed;
}

}  // namespace

TrafficPlan plan_traffic(const Scenario& s) {
  TrafficPlan t;
  const auto& moe = s.model.moe;
  const int ep = s.parallel.ep;
  // FP8 runs quantize what they dispatch, but activations they combine or reduce stay 16-bit.
  const int element = models::bytes_per_element(s.workload.dtype);
  const double token_bytes = static_cast<double>(s.model.hidden) * element;
  const double activation_bytes = static_cast<double>(s.model.hidden) * std::max(element, 2);
  // alltoall: every rank routes its own tokens; allreduce: one replicated batch routed once.
  const bool replicated = s.parallel.moe_comm == MoeComm::ALLREDUCE;
  const int sources = replicated ? 1 : ep;
  auto plan = models::route_tokens(s.workload.routing, s.workload.seed, sources, s.workload.tokens,
                                   moe.experts, moe.top_k, s.workload.capacity_factor);
  const int local = moe.experts / ep;
  auto loads = models::expert_load(plan);
  for (int r = 0; r < ep; ++r) {
    std::vector<std::int64_t> mine(loads.begin() + r * local, loads.begin() + (r + 1) * local);
    std::int64_t rows =
        replicated
            ? std::accumulate(mine.begin(), mine.end(), std::int64_t{0})
            : std::accumulate(plan.tokens_to_expert[static_cast<std::size_t>(r)].begin(),
                              plan.tokens_to_expert[static_cast<std::size_t>(r)].end(), std::int64_t{0});
    t.expert_tokens.push_back(std::move(mine));
    t.routed_rows.push_back(rows);
  }
  if (!replicated) {
    t.dispatch_bytes = std::make_shared<const sim::PairBytes>(models::dispatch_bytes(plan, ep, token_bytes));
    t.combine_bytes =
        std::make_shared<const sim::PairBytes>(transpose(models::dispatch_bytes(plan, ep, activation_bytes)));
  }
  t.allreduce_bytes = static_cast<double>(s.workload.tokens) * activation_bytes;
  bool same_work = std::all_of(t.expert_tokens.begin(), t.expert_tokens.end(),
                               [&](const auto& e) { return e == t.expert_tokens.front(); }) &&
                   std::all_of(t.routed_rows.begin(), t.routed_rows.end(),
                               [&](auto r) { return r == t.routed_rows.front(); });
  bool same_traffic = true;
  if (t.dispatch_bytes) {
    const double first = t.dispatch_bytes->front().front();
    for (const auto& row : *t.dispatch_bytes) {
      for (double b : row) same_traffic = same_traffic && b == first;
    }
  }
  t.symmetric = same_work && same_traffic && !s.per_rank;
  return t;
}

ProgramBuilder::ProgramBuilder(const Scenario& scenario, const TrafficPlan& traffic, sim::Program& program,
                               sim::Transport all_to_all_transport, AllToAllAlgorithm all_to_all)
    : s_(scenario),
      traffic_(traffic),
      program_(program),
      launch_ns_(cost::launch_ns(scenario.hw) / scenario.host_speed),
      host_scale_(host_scale(scenario)),
      backward_host_scale_(1.0 / scenario.host_speed),
      all_to_all_transport_(all_to_all_transport),
      all_to_all_(all_to_all) {}

bool ProgramBuilder::hierarchical_here() const {
  return all_to_all_.hierarchical && traffic_.dispatch_bytes;
}

void ProgramBuilder::for_each_rank(bool tp_stream, const std::function<void(int rank)>& emit) {
  for (int r : program_.simulated_ranks()) {
    begin_rank(r, tp_stream);
    emit(r);
    if (s_.workload.phase == Phase::FORWARD) free_forward_graph();
  }
}

void ProgramBuilder::begin_rank(int rank) {
  rank_ = rank;
  // EP groups are aligned blocks of ep ranks: a pipeline stage's representative is its group's first rank.
  local_ = rank % s_.parallel.ep;
  group_base_ = rank - local_;
  pending_waits_.clear();
  deferred_.clear();
  last_compute_ = NO_OP;
  forward_launches_ = 0;
  last_layer_ = 0;
  if (hierarchical_here() && s_.parallel.ep > s_.hw.node.gpus_per_node) {
    program_.set_streams(rank, {"compute", "comm", "comm.nvlink"});
  } else {
    program_.set_streams(rank, {"compute", "comm"});
  }
}

int ProgramBuilder::add_stream(const std::string& name) {
  std::vector<std::string> streams = program_.streams(rank_);
  streams.push_back(name);
  program_.set_streams(rank_, streams);
  return static_cast<int>(streams.size()) - 1;
}

void ProgramBuilder::set_micro_batch(int micro_batch, std::string tag) {
  micro_batch_ = micro_batch;
  name_tag_ = std::move(tag);
}

std::string ProgramBuilder::layer_prefix(int layer) const {
  return name_tag_ + "L" + std::to_string(layer) + ".";
}

sim::OpOrigin ProgramBuilder::origin(int layer, bool backward, std::string block) const {
  sim::OpOrigin o{layer, backward, std::move(block)};
  o.micro_batch = micro_batch_;
  return o;
}

std::vector<OpId> ProgramBuilder::take_waits() {
  std::vector<OpId> out = std::move(pending_waits_);
  pending_waits_.clear();
  std::erase(out, NO_OP);
  return out;
}

std::vector<OpId> ProgramBuilder::take_outputs() {
  std::vector<OpId> out = std::move(pending_waits_);
  pending_waits_.clear();
  if (last_compute_ != NO_OP) out.push_back(last_compute_);
  std::erase(out, NO_OP);
  return out;
}

void ProgramBuilder::begin_rank(int rank, bool tp_stream) {
  begin_rank(rank);
  if (tp_stream) program_.set_streams(rank, {"compute", "comm", "tp_comm"});
}

models::OpContext ProgramBuilder::context(LayerOp op) const {
  models::OpContext c;
  c.tokens = s_.workload.tokens;
  c.seq_len = s_.workload.seq_len;
  c.prefix_len = s_.workload.kv_len;
  c.dtype = s_.workload.dtype;
  c.tp = s_.parallel.tp;
  const auto r = static_cast<std::size_t>(local_);
  c.expert_tokens = traffic_.expert_tokens[r];
  c.experts_total_local = static_cast<int>(c.expert_tokens.size());
  c.expert_loop = s_.workload.expert_loop;
  c.regroup_by_expert = s_.parallel.moe_comm == MoeComm::ALLTOALL;
  c.routed_rows = traffic_.routed_rows[r];
  // With TP, the dense MLPs split their columns tp ways: same FLOPs as 1/tp of the tokens.
  if (s_.parallel.tp > 1 && (op == LayerOp::SHARED_EXPERTS || op == LayerOp::DENSE_FFN))
    c.tokens /= s_.parallel.tp;
  // Sequence parallelism: outside attention's projections each rank holds 1/tp of the tokens.
  const bool attention_tp = op == LayerOp::ATTN_QKV || op == LayerOp::ATTN_CORE || op == LayerOp::ATTN_OUT;
  if (sequence_parallel() && !attention_tp && op != LayerOp::SHARED_EXPERTS && op != LayerOp::DENSE_FFN)
    c.tokens /= s_.parallel.tp;
  return c;
}

std::optional<models::OpContext> ProgramBuilder::windowed(int layer, LayerOp op,
                                                          const models::OpContext& context) const {
  const auto& attention = s_.model.attention;
  if (op != LayerOp::ATTN_CORE || !attention.windowed_layer(layer)) return std::nullopt;
  models::OpContext c = context;
  c.window = attention.window;
  c.window_tokens = attention.window_tokens;
  return c;
}

bool ProgramBuilder::sequence_parallel() const {
  return s_.parallel.tp > 1 && s_.parallel.moe_comm == MoeComm::ALLTOALL;
}

OpId ProgramBuilder::tp_collective(int layer, sim::CollectiveKind kind, bool backward,
                                   const std::string& block) {
  if (!sequence_parallel()) return NO_OP;
  const int tp = s_.parallel.tp;
  const std::string category = kind == sim::CollectiveKind::ALL_GATHER ? "tp_allgather" : "tp_reducescatter";
  sim::CollectiveSpec c;
  const int first = rank_ - rank_ % tp;
  c.name = layer_prefix(layer) + block + "." + category + (backward ? ".bwd" : "") + ".g" +
           std::to_string(first / tp);
  c.kind = kind;
  for (int r = first; r < first + tp; ++r) c.group.push_back(r);
  // nccl-tests size: the gathered buffer, every token of the TP group (activations stay 16-bit)
  const int element = std::max(models::bytes_per_element(s_.workload.dtype), 2);
  c.bytes = static_cast<double>(s_.workload.tokens) * s_.model.hidden * element;
  return collective(std::move(c), TP_COMM, category, {last_compute_}, origin(layer, backward, category));
}

OpId ProgramBuilder::sequence_gather(int layer, bool backward, const std::string& block) {
  return tp_collective(layer, sim::CollectiveKind::ALL_GATHER, backward, block);
}

OpId ProgramBuilder::sequence_scatter(int layer, bool backward, const std::string& block) {
  return tp_collective(layer, sim::CollectiveKind::REDUCE_SCATTER, backward, block);
}

OpId ProgramBuilder::compute(int layer, LayerOp op, Pass pass, std::vector<OpId> deps) {
  return compute(layer, "", op, pass, context(op), std::move(deps));
}

OpId ProgramBuilder::norm(int layer, LayerOp op, int extra_inputs, std::vector<OpId> deps) {
  models::OpContext c = context(op);
  c.norm_extra_inputs = extra_inputs;
  return compute(layer, "", op, Pass::FORWARD, c, std::move(deps));
}

OpId ProgramBuilder::compute(int layer, const std::string& tag, LayerOp op, Pass pass,
                             const models::OpContext& context, std::vector<OpId> deps) {
  const std::string prefix = layer_prefix(layer) + (tag.empty() ? "" : tag + ".");
  const sim::OpOrigin origin = this->origin(layer, pass != Pass::FORWARD, models::to_string(op));
  const double scale = pass == Pass::FORWARD ? host_scale_ : backward_host_scale_;
  const cost::OpCostInputs inputs{s_.hw, s_.model, s_.workload.attention, s_.impl.get(), s_.parallel.ep};
  OpId last = NO_OP;
  bool first = true;
  const std::optional<models::OpContext> window = windowed(layer, op, context);
  for (const cost::KernelPiece& k : cost::op_kernels(inputs, op, pass, window ? *window : context)) {
    if (first) {
      deps.insert(deps.end(), pending_waits_.begin(), pending_waits_.end());
      pending_waits_.clear();
      std::erase(deps, NO_OP);
    }
    if (k.kind == cost::PieceKind::HOST_SYNC) {
      // The stack's own host work before the sync runs while the GPU works; then the host waits for the
      // compute stream (and, before the op's first kernel, for what that kernel would have waited for).
      if (k.launch_ns > 0)
        program_.add_host_op(rank_, prefix + k.name + ".host", "host", k.launch_ns * scale, {}, origin);
      std::vector<OpId> drained = first ? deps : std::vector<OpId>{};
      if (const OpId tail = last != NO_OP ? last : last_compute_; tail != NO_OP) drained.push_back(tail);
      program_.add_host_op(rank_, prefix + k.name, "host_sync", 0, std::move(drained), origin);
      continue;
    }
    if (!first) deps.clear();
    first = false;
    flops_[rank_] += k.flops;
    forward_launches_ += pass == Pass::FORWARD;
    last_layer_ = std::max(last_layer_, layer);
    last = program_.add_kernel(rank_, COMPUTE, prefix + k.name, category(op), k.work, k.launch_ns * scale,
                               deps, origin);
  }
  if (last != NO_OP) last_compute_ = last;
  return last;
}

OpId ProgramBuilder::backward(int layer, const std::string& tag, LayerOp op, const models::OpContext& context,
                              std::vector<OpId> deps) {
  OpId d = compute(layer, tag, op, Pass::DGRAD, context, std::move(deps));
  if (defer_wgrad_) {
    deferred_.back().push_back({layer, tag, op, context, name_tag_, micro_batch_});
    return d;
  }
  OpId w = compute(layer, tag, op, Pass::WGRAD, context);
  return w != NO_OP ? w : d;
}

OpId ProgramBuilder::backward(int layer, LayerOp op, std::vector<OpId> deps) {
  return backward(layer, "", op, context(op), std::move(deps));
}

bool ProgramBuilder::runs_model_op(LayerOp op, Pass pass) const {
  const auto impl_pass = pass == Pass::FORWARD ? cost::ImplPass::FORWARD : cost::ImplPass::BACKWARD;
  return s_.impl != nullptr && s_.impl->find(op, impl_pass, s_.model.attention.type) != nullptr;
}

OpId ProgramBuilder::model_op(int layer, LayerOp op, Pass pass, std::vector<OpId> deps) {
  if (!runs_model_op(op, pass)) return NO_OP;
  return pass == Pass::FORWARD ? compute(layer, op, pass, std::move(deps))
                               : backward(layer, op, std::move(deps));
}

void ProgramBuilder::defer_wgrad(bool on) {
  if (on && !defer_wgrad_) deferred_.emplace_back();
  defer_wgrad_ = on;
}

OpId ProgramBuilder::flush_wgrad() {
  if (deferred_.empty()) return NO_OP;
  const std::string tag = name_tag_;
  const int micro_batch = micro_batch_;
  const bool deferring = defer_wgrad_;
  defer_wgrad_ = false;
  OpId last = NO_OP;
  for (const DeferredWgrad& d : deferred_.front()) {
    set_micro_batch(d.micro_batch, d.name_tag);
    if (OpId w = compute(d.layer, d.tag, d.op, Pass::WGRAD, d.context); w != NO_OP) last = w;
  }
  deferred_.pop_front();
  defer_wgrad_ = deferring;
  set_micro_batch(micro_batch, tag);
  return last;
}

OpId ProgramBuilder::memory_kernel(const std::string& name, const std::string& category, double bytes,
                                   std::vector<OpId> deps, sim::OpOrigin origin) {
  models::KernelCost cost;
  cost.name = name;
  cost.kind = models::KernelClass::MEMORY;
  cost.bytes = bytes;
  deps.insert(deps.end(), pending_waits_.begin(), pending_waits_.end());
  pending_waits_.clear();
  std::erase(deps, NO_OP);
  last_compute_ =
      program_.add_kernel(rank_, COMPUTE, name, category,
                          cost::kernel_work(s_.hw, cost, s_.workload.dtype, s_.workload.attention),
                          launch_ns_, std::move(deps), std::move(origin));
  return last_compute_;
}

double ProgramBuilder::flops(int rank) const {
  auto it = flops_.find(rank);
  return it == flops_.end() ? 0.0 : it->second;
}

void ProgramBuilder::wait(OpId op) {
  if (op != NO_OP) pending_waits_.push_back(op);
}

void ProgramBuilder::host_sync(int layer, OpId op) {
  if (op == NO_OP || (s_.impl && !s_.impl->is_fused())) return;
  program_.add_host_op(rank_, layer_prefix(layer) + "split_sizes_to_host", "host_sync", launch_ns_, {op},
                       origin(layer, false, "split_sizes_to_host"));
}

void ProgramBuilder::free_forward_graph() {
  const double per_launch_us = s_.impl ? s_.impl->graph_free_us() : 0;
  if (per_launch_us <= 0 || forward_launches_ == 0) return;
  // After the forward, as the backward's host costs: no collective waits on it, so no straggle factor.
  const double ns = per_launch_us * 1e3 * static_cast<double>(forward_launches_) * backward_host_scale_;
  program_.add_host_op(rank_, layer_prefix(last_layer_) + "autograd_graph_free", "host", ns, {},
                       origin(last_layer_, false, "autograd_graph_free"));
  forward_launches_ = 0;
  last_layer_ = 0;
}

sim::CollectiveSpec ProgramBuilder::spec(int layer, Comm which) const {
  sim::CollectiveSpec c;
  c.name = layer_prefix(layer) + to_string(which);
  for (int r = 0; r < s_.parallel.ep; ++r) c.group.push_back(group_base_ + r);
  switch (which) {
    case Comm::DISPATCH:
    case Comm::COMBINE_BWD:  // the gradient of Combine travels like Dispatch: token owners → experts
      c.kind = sim::CollectiveKind::ALL_TO_ALL;
      c.shared_pair_bytes = traffic_.dispatch_bytes;
      c.transport = all_to_all_transport_;
      c.sms = all_to_all_.sms;
      break;
    case Comm::COMBINE:
    case Comm::DISPATCH_BWD:
      c.kind = sim::CollectiveKind::ALL_TO_ALL;
      c.shared_pair_bytes = traffic_.combine_bytes;
      c.transport = all_to_all_transport_;
      c.sms = all_to_all_.sms;
      break;
    case Comm::ATTN_ALLREDUCE:
    case Comm::MOE_ALLREDUCE:
      c.kind = sim::CollectiveKind::ALL_REDUCE;
      c.bytes = traffic_.allreduce_bytes;
      break;
  }
  return c;
}

OpId ProgramBuilder::collective(sim::CollectiveSpec spec, int stream, const std::string& category,
                                std::vector<OpId> deps, sim::OpOrigin origin) {
  const double launch = host_ns(spec);
  return add_collective(std::move(spec), stream, category, std::move(deps), std::move(origin), launch);
}

OpId ProgramBuilder::add_collective(sim::CollectiveSpec spec, int stream, const std::string& category,
                                    std::vector<OpId> deps, sim::OpOrigin origin, double launch_ns) {
  const std::string name = spec.name;
  auto [it, fresh] = collectives_.try_emplace(name, -1);
  if (fresh) it->second = program_.add_collective(std::move(spec));
  std::erase(deps, NO_OP);
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return program_.add_collective_member(it->second, rank_, stream, category, launch_ns, std::move(deps),
                                        std::move(origin));
}

OpId ProgramBuilder::memory_kernel(int layer, int stream, const std::string& name,
                                   const std::string& category, double read_bytes, double write_bytes,
                                   std::vector<OpId> deps) {
  models::KernelCost k;
  k.name = name;
  k.kind = models::KernelClass::MEMORY;
  k.bytes = read_bytes + write_bytes;
  std::erase(deps, NO_OP);
  return program_.add_kernel(rank_, stream, "L" + std::to_string(layer) + "." + name, category,
                             cost::kernel_work(s_.hw, k, s_.workload.dtype), cost::launch_ns(s_.hw, k), deps,
                             {layer, false, category});
}

// NCCL launches one kernel per collective; a copy-engine all-to-all issues one copy (with its events)
// per destination that gets bytes, this rank's own share included.
double ProgramBuilder::host_ns(const sim::CollectiveSpec& spec) const {
  if (spec.transport != sim::Transport::COPY_ENGINE) return launch_ns_;
  const auto me = std::find(spec.group.begin(), spec.group.end(), rank_) - spec.group.begin();
  const auto& row = spec.pairs().at(static_cast<std::size_t>(me));
  const auto copies = std::count_if(row.begin(), row.end(), [](double b) { return b > 0; });
  return static_cast<double>(copies) * cost::copy_launch_ns(s_.hw) * host_scale_;
}

OpId ProgramBuilder::hierarchical_collective(int layer, Comm which, std::vector<OpId> deps) {
  const bool backward = which == Comm::DISPATCH_BWD || which == Comm::COMBINE_BWD;
  // Combine and Dispatch's gradient flow from experts to token owners.
  const bool to_owners = which == Comm::COMBINE || which == Comm::DISPATCH_BWD;
  const auto& moe = s_.model.moe;
  HierarchicalShape shape;
  shape.gpus_per_node = s_.hw.node.gpus_per_node;
  shape.nodes = (s_.parallel.ep + shape.gpus_per_node - 1) / shape.gpus_per_node;
  const int per_gpu = moe.experts / s_.parallel.ep;
  shape.node_factor = expected_copy_factor(moe.experts, moe.top_k, per_gpu * shape.gpus_per_node);
  shape.gpu_factor = expected_copy_factor(moe.experts, moe.top_k, per_gpu);
  const std::string base = layer_prefix(layer) + to_string(which);
  const sim::OpOrigin origin{layer, backward, to_string(which)};
  const int stream_of[] = {COMM, shape.nodes > 1 ? COMM + 1 : COMM};
  const char* suffix[] = {".rdma.rail", ".nvlink.node"};
  const HierLeg legs[] = {HierLeg::RDMA, HierLeg::NVLINK};
  std::vector<OpId> members;
  // Inside one node only the NVLink leg runs (DeepEP's intranode kernels).
  for (int i = shape.nodes > 1 ? 0 : 1; i < 2; ++i) {
    const int g = shape.gpus_per_node;
    sim::CollectiveSpec c;
    // Rails and nodes are counted inside the EP group (a pipeline stage's group starts at group_base_).
    c.name = base + suffix[i] + std::to_string(i == 0 ? local_ % g : local_ / g);
    if (!collectives_.contains(c.name)) {
      const auto& pairs = to_owners ? *traffic_.combine_bytes : *traffic_.dispatch_bytes;
      c = hierarchical_leg(pairs, shape, legs[i], local_, to_owners);  // combine's matrix: [expert][owner]
      for (int& member : c.group) member += group_base_;
      c.name = base + suffix[i] + std::to_string(i == 0 ? local_ % g : local_ / g);
      c.transport = all_to_all_transport_;
      const int kernel_sms = all_to_all_.sms > 0 ? all_to_all_.sms : s_.hw.contention.comm_sms;
      c.sms = shape.nodes > 1 ? std::max(1, kernel_sms / 2) : kernel_sms;
    }
    members.push_back(collective(std::move(c), stream_of[i], to_string(which), deps, origin));
  }
  if (members.size() == 1) return members.front();
  // The forwarded data is in place once both legs end: a no-work marker (one SM, 0 ns) on the comm stream
  // waits for both.
  return program_.add_kernel(rank_, COMM, base + ".join", to_string(which),
                             sim::KernelWork{0, 0, 0, 1.0 / s_.hw.gpu.sm_count}, 0, {members[1]}, origin);
}

OpId ProgramBuilder::collective(int layer, Comm which, std::vector<OpId> deps) {
  deps.push_back(last_compute_);
  if (hierarchical_here() && which != Comm::ATTN_ALLREDUCE && which != Comm::MOE_ALLREDUCE)
    return hierarchical_collective(layer, which, std::move(deps));
  const bool backward = which == Comm::DISPATCH_BWD || which == Comm::COMBINE_BWD;
  // The first member's call builds the spec (group, shared byte matrix); the others reuse the registered one.
  sim::CollectiveSpec c;
  c.name = layer_prefix(layer) + to_string(which);
  const auto known = collectives_.find(c.name);
  if (known == collectives_.end()) c = spec(layer, which);
  const sim::CollectiveSpec& built =
      known == collectives_.end() ? c : program_.collectives().at(static_cast<std::size_t>(known->second));
  // The stack's launch of the collective (Python, split sizes, the NCCL call) where the implementation gives
  // it. A one-rank group calls no collective in any eager stack.
  const std::optional<double> stack = s_.impl ? s_.impl->collective_host(to_string(which)) : std::nullopt;
  const double launch = !stack               ? host_ns(built)
                        : s_.parallel.ep > 1 ? *stack * (backward ? backward_host_scale_ : host_scale_)
                                             : 0.0;
  return add_collective(std::move(c), COMM, to_string(which), std::move(deps),
                        origin(layer, backward, to_string(which)), launch);
}

}  // namespace moesim::schedules::detail
