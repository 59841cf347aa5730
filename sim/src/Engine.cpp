#include "moesim/sim/Engine.hpp"

#include <algorithm>

#include "Simulation.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::sim::detail {

Simulation::Simulation(const Platform& platform, const Program& program, const JitterSpec& jitter,
                       SimGridNetwork* grid)
    : platform_(platform), program_(program), grid_(grid), ops_(program.ops()), network_(max_min_mode()) {
  program.validate();
  if (jitter.scope != JitterScope::NONE && program.is_symmetric())
    throw ScheduleError("jitter needs a per-rank program (every rank simulated)");
  if (program.world_size() > platform.topology.world_size()) {
    throw ScheduleError("program needs " + std::to_string(program.world_size()) +
                        " GPUs but the platform has " + std::to_string(platform.topology.world_size()));
  }
  const std::size_t n = ops_.size();
  timing_.resize(n);
  deps_left_.assign(n, 0);
  deps_time_.assign(n, 0);
  deps_last_.assign(n, NO_OP);
  stream_prev_.assign(n, NO_OP);
  stream_next_.assign(n, NO_OP);
  host_prev_.assign(n, NO_OP);
  kernel_slot_.assign(n, -1);
  hosts_.resize(static_cast<std::size_t>(program.world_size()));
  gpus_.resize(static_cast<std::size_t>(program.world_size()));
  std::vector<std::vector<OpId>> last_on_stream(static_cast<std::size_t>(program.world_size()));
  pool_index_.assign(n, -1);
  const auto world = static_cast<std::size_t>(program.world_size());
  rank_start_ns_.assign(world, 0.0);
  if (jitter.scope == JitterScope::RANK_START) rank_start_ns_ = draw_delays(jitter, world);
  if (jitter.scope == JitterScope::OP_LAUNCH) extra_host_ns_ = draw_delays(jitter, n);
  // Who waits for each op, in op order: counted, then filled (one array rather than a vector per op).
  dependents_begin_.assign(n + 1, 0);
  for (const Op& op : ops_) {
    for (OpId d : op.deps) ++dependents_begin_[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) dependents_begin_[i + 1] += dependents_begin_[i];
  dependents_.resize(dependents_begin_[n]);
  std::vector<std::size_t> filled(dependents_begin_.begin(), dependents_begin_.end() - 1);
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    for (OpId d : ops_[static_cast<std::size_t>(id)].deps)
      dependents_[filled[static_cast<std::size_t>(d)]++] = id;
  }
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    const Op& op = ops_[static_cast<std::size_t>(id)];
    deps_left_[static_cast<std::size_t>(id)] = static_cast<int>(op.deps.size());
    if (op.kind == OpKind::POOL) {
      pool_index_[static_cast<std::size_t>(id)] = static_cast<int>(pools_.size());
      pools_.push_back(PoolState{false, op.processors, 0, {}, {}, 0});
    }
    if (op.kind == OpKind::TASK) {
      int p = pool_index_[static_cast<std::size_t>(op.pool)];
      pool_index_[static_cast<std::size_t>(id)] = p;
      pools_[static_cast<std::size_t>(p)].tasks.push_back(id);
      ++pools_[static_cast<std::size_t>(p)].remaining;
    }
    if (!op.is_host_launched()) continue;
    auto& host = hosts_[static_cast<std::size_t>(op.rank)];
    if (!host.queue.empty()) host_prev_[static_cast<std::size_t>(id)] = host.queue.back();
    host.queue.push_back(id);
    if (op.kind == OpKind::HOST) continue;
    auto& last = last_on_stream[static_cast<std::size_t>(op.rank)];
    if (last.size() <= static_cast<std::size_t>(op.stream))
      last.resize(static_cast<std::size_t>(op.stream) + 1, NO_OP);
    OpId prev = last[static_cast<std::size_t>(op.stream)];
    if (prev != NO_OP) {
      stream_prev_[static_cast<std::size_t>(id)] = prev;
      stream_next_[static_cast<std::size_t>(prev)] = id;
    }
    last[static_cast<std::size_t>(op.stream)] = id;
  }
  for (const auto& spec : program.collectives()) {
    CollectiveState st;
    st.outstanding.assign(spec.group.size(), 0);
    st.member_at.assign(spec.group.size(), NO_OP);
    collectives_.push_back(std::move(st));
  }
  for (std::size_t c = 0; c < collectives_.size(); ++c) {
    for (OpId m : program.members(static_cast<int>(c))) {
      const int idx = program.group_index(static_cast<int>(c), ops_[static_cast<std::size_t>(m)].rank);
      collectives_[c].member_at[static_cast<std::size_t>(idx)] = m;
      ++collectives_[c].expected;
    }
  }
  if (grid_ == nullptr) add_link_resources();
}

void Simulation::schedule(TimeNs at, EventType type, int target, std::uint64_t version) {
  if (at > kLastNs) beyond_time_limit(static_cast<double>(at - now_));
  events_.push(Event{at, event_class(type), seq_++, type, target, version});
}

RunResult Simulation::run() {
  for (int r : program_.simulated_ranks()) {
    TimeNs late = ceil_ns(rank_start_ns_[static_cast<std::size_t>(r)]);
    if (late > 0) {
      schedule(late, EventType::RANK_START, r);
    } else {
      advance_host(r);
    }
  }
  for (OpId id = 0; id < static_cast<OpId>(ops_.size()); ++id) {
    if (!ops_[static_cast<std::size_t>(id)].is_host_launched()) try_start_device(id);
  }
  if (grid_ == nullptr) {
    run_analytic();
  } else {
    run_on_grid();
  }
  check_all_ran();
  RunResult result;
  for (const auto& t : timing_) result.makespan_ns = std::max(result.makespan_ns, t.end);
  result.ops = std::move(timing_);
  result.events = processed_;
  return result;
}

void Simulation::run_analytic() {
  while (!events_.empty() || !flow_events_.empty()) {
    now_ = flow_event_first() ? flow_events_.top().key.time : events_.top().time;
    for (;;) {
      if (flow_event_first()) {
        if (flow_events_.top().key.time != now_) break;
        const int f = flow_events_.top().id;
        flow_events_.pop();
        ++processed_;
        finish_flow(f);
        continue;
      }
      if (events_.empty() || events_.top().time != now_) break;
      Event e = events_.top();
      events_.pop();
      handle(e);
    }
    settle_step();
  }
}

void Simulation::handle_events_at_now() {
  while (!events_.empty() && events_.top().time == now_) {
    Event e = events_.top();
    events_.pop();
    handle(e);
  }
}

/** After a time step's events: new kernel rates, then (if anything moved) the network's shares. */
void Simulation::settle_step() {
  // GPUs in rank order: their kernels' completions are scheduled in that order.
  std::sort(dirty_gpus_.begin(), dirty_gpus_.end());
  for (int r : dirty_gpus_) recompute_gpu(r);
  dirty_gpus_.clear();
  if (network_dirty_) recompute_network();
}

void Simulation::handle(const Event& e) {
  switch (e.type) {
    case EventType::HOST_DONE:
      ++processed_;
      host_done(e.target);
      break;
    case EventType::KERNEL_FIXED_DONE:
      ++processed_;
      begin_fluid(e.target);
      break;
    case EventType::KERNEL_DONE: {
      const int slot = kernel_slot_[static_cast<std::size_t>(e.target)];
      if (slot < 0 || fluids_[static_cast<std::size_t>(slot)].version != e.version) return;  // superseded
      ++processed_;
      kernel_slot_[static_cast<std::size_t>(e.target)] = -1;
      free_fluids_.push_back(slot);
      auto& gpu = gpus_[static_cast<std::size_t>(ops_[static_cast<std::size_t>(e.target)].rank)];
      std::erase(gpu.fluid_kernels, e.target);
      kernel_left_gpu(e.target);
      finish_op(e.target);
      break;
    }
    case EventType::LATENCY_DONE:
      ++processed_;
      begin_flows(e.target);
      break;
    case EventType::FLOW_DONE:  // flows complete through flow_events_
      break;
    case EventType::TASK_DONE:
      ++processed_;
      finish_task(e.target);
      break;
    case EventType::TRANSFER_START:
      ++processed_;
      begin_transfer(e.target);
      break;
    case EventType::RANK_START:
      ++processed_;
      advance_host(e.target);
      break;
  }
}

void Simulation::advance_host(int rank) {
  auto& host = hosts_[static_cast<std::size_t>(rank)];
  if (host.busy || host.next >= host.queue.size()) return;
  OpId id = host.queue[host.next];
  const Op& op = ops_[static_cast<std::size_t>(id)];
  auto& t = timing_[static_cast<std::size_t>(id)];
  if (op.kind == OpKind::HOST) {
    if (deps_left_[static_cast<std::size_t>(id)] > 0) {
      host.blocked = true;  // a host sync: the thread waits for the GPU
      return;
    }
    host.blocked = false;
    t.start = now_;
    bool waited =
        deps_time_[static_cast<std::size_t>(id)] >= now_ && deps_last_[static_cast<std::size_t>(id)] != NO_OP;
    t.binding = waited ? Binding::DEPENDENCY : Binding::LAUNCH;
    t.binding_op =
        waited ? deps_last_[static_cast<std::size_t>(id)] : host_prev_[static_cast<std::size_t>(id)];
  }
  t.launch_begin = now_;
  host.busy = true;
  const double jitter_ns = extra_host_ns_.empty() ? 0.0 : extra_host_ns_[static_cast<std::size_t>(id)];
  schedule(now_ + ceil_ns(op.host_ns + jitter_ns), EventType::HOST_DONE, rank);
}

void Simulation::host_done(int rank) {
  auto& host = hosts_[static_cast<std::size_t>(rank)];
  OpId id = host.queue[host.next++];
  host.busy = false;
  timing_[static_cast<std::size_t>(id)].launched = now_;
  if (ops_[static_cast<std::size_t>(id)].kind == OpKind::HOST) {
    finish_op(id);
  } else {
    try_start(id);
  }
  advance_host(rank);
}

void Simulation::try_start(OpId id) {
  auto& t = timing_[static_cast<std::size_t>(id)];
  const Op& op = ops_[static_cast<std::size_t>(id)];
  if (op.kind == OpKind::HOST || t.start >= 0 || t.launched < 0 ||
      deps_left_[static_cast<std::size_t>(id)] > 0)
    return;
  OpId prev = stream_prev_[static_cast<std::size_t>(id)];
  if (prev != NO_OP && timing_[static_cast<std::size_t>(prev)].end < 0) return;
  // The condition met last is what held the op back; ties credit data dependencies, then the stream.
  t.binding = Binding::LAUNCH;
  t.binding_op = host_prev_[static_cast<std::size_t>(id)];
  TimeNs latest = t.launched;
  if (prev != NO_OP && timing_[static_cast<std::size_t>(prev)].end >= latest) {
    latest = timing_[static_cast<std::size_t>(prev)].end;
    t.binding = Binding::STREAM;
    t.binding_op = prev;
  }
  if (deps_last_[static_cast<std::size_t>(id)] != NO_OP &&
      deps_time_[static_cast<std::size_t>(id)] >= latest) {
    t.binding = Binding::DEPENDENCY;
    t.binding_op = deps_last_[static_cast<std::size_t>(id)];
  }
  t.start = now_;
  if (op.kind == OpKind::KERNEL) {
    start_kernel(id);
  } else if (op.kind == OpKind::POOL) {
    start_pool(id);
  } else {
    arrive(id);
  }
}

void Simulation::start_kernel(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  gpu.running.push_back(id);
  mark_ports_changed(op.rank);
  network_dirty_ = network_dirty_ || live_flows_ > 0;
  if (op.work.fixed_ns > 0) {
    schedule(now_ + ceil_ns(op.work.fixed_ns), EventType::KERNEL_FIXED_DONE, id);
  } else {
    begin_fluid(id);
  }
}

void Simulation::begin_fluid(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  if (op.work.compute_ns <= 0 && op.work.memory_ns <= 0) {
    kernel_left_gpu(id);
    finish_op(id);
    return;
  }
  int slot = 0;
  if (free_fluids_.empty()) {
    slot = static_cast<int>(fluids_.size());
    fluids_.emplace_back();
  } else {
    slot = free_fluids_.back();
    free_fluids_.pop_back();
  }
  kernel_slot_[static_cast<std::size_t>(id)] = slot;
  Fluid& k = fluids_[static_cast<std::size_t>(slot)];
  k.remaining = 1.0;
  k.rate = 0;
  k.last = now_;
  gpu.fluid_kernels.insert(std::upper_bound(gpu.fluid_kernels.begin(), gpu.fluid_kernels.end(), id), id);
  mark_dirty(op.rank);
}

/*
 * A collective kernel's blocks wait behind the blocks of kernels launched before it: the block
 * scheduler does not preempt, so an NCCL kernel that reaches its stream while a compute kernel fills
 * the SMs starts at that kernel's end (a kernel boundary), not beside it. Kernels that start later
 * queue behind it and find its SMs taken. contention_bench shows it: a collective shorter than the
 * GEMM it meets ends with that GEMM. That holds for one-wave (persistent) kernels such as Hopper's
 * cuBLAS GEMMs; a kernel of many waves would let the comm blocks in as its first wave retires, which
 * the engine does not distinguish.
 */
void Simulation::arrive(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  const auto& spec = program_.collectives()[static_cast<std::size_t>(op.collective)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  if (spec.transport == Transport::SM_KERNEL && !sms_free_for_comm(gpu, gpu.running, sms_of(spec))) {
    gpu.awaiting_sms.push_back(AwaitingSms{id, gpu.running});
    return;
  }
  join_collective(id);
}

double Simulation::sms_of(const CollectiveSpec& spec) const {
  return spec.sms > 0 ? spec.sms : platform_.gpu.comm_sms;
}

bool Simulation::sms_free_for_comm(const GpuState& gpu, const std::vector<OpId>& ahead, double needed) const {
  const auto& res = platform_.gpu;
  double taken = gpu.comm_sms + gpu.pool_sms;
  for (OpId k : ahead) taken += ops_[static_cast<std::size_t>(k)].work.sm_fraction * res.sm_count;
  return res.sm_count - taken >= needed - 1e-9;
}

void Simulation::kernel_left_gpu(OpId id) {
  const int rank = ops_[static_cast<std::size_t>(id)].rank;
  auto& gpu = gpus_[static_cast<std::size_t>(rank)];
  std::erase(gpu.running, id);
  mark_dirty(rank);
  mark_ports_changed(rank);
  network_dirty_ = network_dirty_ || live_flows_ > 0;
  for (std::size_t i = 0; i < gpu.awaiting_sms.size();) {
    AwaitingSms& w = gpu.awaiting_sms[i];
    std::erase(w.ahead, id);
    const auto& waiting =
        program_.collectives()[static_cast<std::size_t>(ops_[static_cast<std::size_t>(w.member)].collective)];
    if (!sms_free_for_comm(gpu, w.ahead, sms_of(waiting))) {
      ++i;
      continue;
    }
    const OpId member = w.member;
    gpu.awaiting_sms.erase(gpu.awaiting_sms.begin() + static_cast<std::ptrdiff_t>(i));
    join_collective(member);  // holds SMs from now on, which the next waiting member must see
  }
}

void Simulation::join_collective(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  const auto& spec = program_.collectives()[static_cast<std::size_t>(op.collective)];
  auto& st = collectives_[static_cast<std::size_t>(op.collective)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  ++(spec.transport == Transport::SM_KERNEL ? gpu.comm_kernels : gpu.copy_collectives);
  if (spec.transport == Transport::SM_KERNEL) gpu.comm_sms += sms_of(spec);
  mark_dirty(op.rank);
  if (++st.arrived < st.expected) return;
  // Last member in: the collective's data phase begins for everyone (the straggler effect).
  const int n = static_cast<int>(spec.group.size());
  double bytes = spec.bytes;
  if (spec.kind == CollectiveKind::ALL_TO_ALL) {
    double total = 0;
    for (const auto& row : spec.pairs()) {
      for (double b : row) total += b;
    }
    bytes = total / n;
  }
  bool spans =
      platform_.topology.node_of(spec.group.front()) != platform_.topology.node_of(spec.group.back());
  for (int r : spec.group)
    spans = spans || platform_.topology.node_of(r) != platform_.topology.node_of(spec.group.front());
  st.cost = platform_.collective_cost(CollectiveQuery{spec.kind, n, spans, bytes, spec.transport});
  MOE_CHECK(st.cost.bus_Bps > 0 || n == 1) << "collective '" << spec.name << "' got no bandwidth";
  int steps = 1;
  if (spec.kind == CollectiveKind::ALL_REDUCE) steps = 2 * (n - 1);
  if (spec.kind == CollectiveKind::ALL_GATHER || spec.kind == CollectiveKind::REDUCE_SCATTER) steps = n - 1;
  if (n == 1) steps = 0;
  for (OpId m : st.member_at) {
    if (m != NO_OP) timing_[static_cast<std::size_t>(m)].data_start = now_;
  }
  // Switches past the first add latency to every step (a ring's step waits for its farthest hop).
  const double step_ns = st.cost.step_latency_ns + platform_.group_extra_latency_ns(spec.group);
  schedule(now_ + ceil_ns(steps * step_ns), EventType::LATENCY_DONE, op.collective);
}

void Simulation::start_analytic_flows(int c) {
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  auto& st = collectives_[static_cast<std::size_t>(c)];
  const int n = static_cast<int>(spec.group.size());
  // Port offsets within the collective: egress i, ingress n + j (copy engines fold both onto member i).
  const int fold = spec.transport == Transport::COPY_ENGINE ? n : 0;
  std::vector<int> resources;
  auto port = [&](int offset) {
    return st.ports[static_cast<std::size_t>(fold > 0 ? offset % fold : offset)];
  };
  auto add_links = [&](const std::vector<int>& links, bool whole_ring) {
    for (int link : links) {
      const auto l = static_cast<std::size_t>(link);
      resources.push_back(whole_ring && !whole_link_resource_.empty() ? whole_link_resource_[l]
                                                                      : link_resource_[l]);
    }
  };
  auto start = [&](Flow f, double bytes) {
    if (bytes <= 0) return;
    f.collective = c;
    hold_members(st, f);
    add_flow(std::move(f), bytes, resources);
  };
  if (n > 1 && spec.kind == CollectiveKind::ALL_TO_ALL) {
    for (int i = 0; i < n; ++i) {
      int src = spec.group[static_cast<std::size_t>(i)];
      if (!program_.is_simulated(src)) continue;  // symmetric runs model traffic from rank 0's side
      for (int j = 0; j < n; ++j) {
        int dst = spec.group[static_cast<std::size_t>(j)];
        const double bytes = spec.pairs()[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        if (src == dst || bytes <= 0) continue;
        if (st.ports.empty()) open_ports(c);
        Route route = platform_.route(src, dst);
        resources.clear();
        add_links(route.source_side, false);
        if (!program_.is_symmetric()) add_links(route.destination_side, false);
        resources.push_back(port(i));
        resources.push_back(port(n + j));
        Flow f;
        f.sender = i;
        f.receiver = j;
        start(std::move(f), bytes);
      }
    }
  } else if (n > 1) {
    // Ring algorithms: every hop carries nccl-tests' bus bytes, all hops in lockstep.
    double factor = spec.kind == CollectiveKind::ALL_REDUCE ? 2.0 * (n - 1) / n : 1.0 * (n - 1) / n;
    const double bytes = factor * spec.bytes;
    if (bytes > 0) {
      open_ports(c);
      resources.clear();
      for (int i = 0; i < n; ++i) {
        Route route = platform_.route(spec.group[static_cast<std::size_t>(i)],
                                      spec.group[static_cast<std::size_t>((i + 1) % n)], /*spread=*/true);
        add_links(route.source_side, true);
        add_links(route.destination_side, true);
      }
      for (int i = 0; i < n; ++i) {
        resources.push_back(port(i));
        resources.push_back(port(n + i));
      }
      Flow f;
      f.whole_ring = true;
      start(std::move(f), bytes);
    }
  }
}

void Simulation::begin_flows(int c) {
  if (grid_ != nullptr) {
    begin_grid_flows(c);
  } else {
    start_analytic_flows(c);
  }
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  auto& st = collectives_[static_cast<std::size_t>(c)];
  const int n = static_cast<int>(spec.group.size());
  ++port_blocks_;
  st.flowing = true;
  network_dirty_ = true;
  for (int i = 0; i < n; ++i) {
    if (st.member_at[static_cast<std::size_t>(i)] == NO_OP ||
        st.outstanding[static_cast<std::size_t>(i)] == 0)
      continue;
    const int rank = gpu_of(spec.group[static_cast<std::size_t>(i)]);
    auto& gpu = gpus_[static_cast<std::size_t>(rank)];
    if (std::find(gpu.flowing.begin(), gpu.flowing.end(), c) == gpu.flowing.end()) gpu.flowing.push_back(c);
    mark_dirty(rank);
  }
  for (int i = 0; i < n; ++i) {
    OpId m = st.member_at[static_cast<std::size_t>(i)];
    if (m != NO_OP && st.outstanding[static_cast<std::size_t>(i)] == 0) finish_member(m);
  }
}

/** The members a flow's completion releases (a ring: all of them) wait for it. */
void Simulation::hold_members(CollectiveState& st, const Flow& f) {
  if (f.whole_ring) {
    for (std::size_t i = 0; i < st.member_at.size(); ++i) {
      if (st.member_at[i] != NO_OP) ++st.outstanding[i];
    }
    return;
  }
  for (int idx : {f.sender, f.receiver}) {
    if (st.member_at[static_cast<std::size_t>(idx)] != NO_OP) ++st.outstanding[static_cast<std::size_t>(idx)];
  }
}

int Simulation::add_flow(Flow flow, double bytes, const std::vector<int>& resources) {
  flow.remaining = bytes;
  flow.last = now_;
  const int id = network_.add_flow(resources);
  if (static_cast<std::size_t>(id) >= flows_.size()) flows_.resize(static_cast<std::size_t>(id) + 1);
  flows_[static_cast<std::size_t>(id)] = std::move(flow);
  ++live_flows_;
  network_dirty_ = true;
  return id;
}

void Simulation::finish_flow(int f) {
  auto& flow = flows_[static_cast<std::size_t>(f)];
  flow.done = true;
  flow.remaining = 0;
  if (grid_ != nullptr) {
    free_grid_ids_.push_back(f);
    if (flow.collective >= 0 && --collectives_[static_cast<std::size_t>(flow.collective)].grid_flows == 0)
      close_ports_when_idle(flow.collective);
  } else {
    network_.remove_flow(f);
  }
  --live_flows_;
  network_dirty_ = true;
  if (flow.transfer != NO_OP) {
    finish_op(flow.transfer);
    return;
  }
  auto& st = collectives_[static_cast<std::size_t>(flow.collective)];
  auto release = [&](int idx) {
    OpId m = st.member_at[static_cast<std::size_t>(idx)];
    if (m != NO_OP && --st.outstanding[static_cast<std::size_t>(idx)] == 0) finish_member(m);
  };
  if (flow.whole_ring) {
    for (int i = 0; i < static_cast<int>(st.outstanding.size()); ++i) release(i);
  } else {
    const int sender = flow.sender, receiver = flow.receiver;
    release(sender);
    release(receiver);
  }
}

void Simulation::finish_member(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  const auto& spec = program_.collectives()[static_cast<std::size_t>(op.collective)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  --(spec.transport == Transport::SM_KERNEL ? gpu.comm_kernels : gpu.copy_collectives);
  if (spec.transport == Transport::SM_KERNEL) gpu.comm_sms -= sms_of(spec);
  std::erase(gpu.flowing, op.collective);
  mark_dirty(op.rank);
  close_ports_when_idle(op.collective);
  finish_op(id);
}

/** A collective's ports close once no member waits and (SimGrid) none of its comms still moves. */
void Simulation::close_ports_when_idle(int c) {
  auto& st = collectives_[static_cast<std::size_t>(c)];
  const bool all_done =
      std::all_of(st.outstanding.begin(), st.outstanding.end(), [](int o) { return o == 0; });
  if (all_done && st.flowing && st.grid_flows == 0) {
    st.flowing = false;
    close_ports(c);
  }
}

void Simulation::finish_op(OpId id) {
  auto& t = timing_[static_cast<std::size_t>(id)];
  t.end = now_;
  for (std::size_t i = dependents_begin_[static_cast<std::size_t>(id)];
       i < dependents_begin_[static_cast<std::size_t>(id) + 1]; ++i) {
    const OpId d = dependents_[i];
    auto di = static_cast<std::size_t>(d);
    --deps_left_[di];
    if (deps_last_[di] == NO_OP || now_ >= deps_time_[di]) {
      deps_time_[di] = now_;
      deps_last_[di] = id;
    }
    if (ops_[di].kind == OpKind::HOST) {
      auto& host = hosts_[static_cast<std::size_t>(ops_[di].rank)];
      if (host.blocked && host.queue[host.next] == d) advance_host(ops_[di].rank);
    } else if (!ops_[di].is_host_launched()) {
      try_start_device(d);
    } else {
      try_start(d);
    }
  }
  OpId next = stream_next_[static_cast<std::size_t>(id)];
  if (next != NO_OP) try_start(next);
}

void Simulation::set_rate(Fluid& fluid, double rate, EventType type, int target) {
  fluid.remaining = std::max(0.0, fluid.remaining - fluid.rate * static_cast<double>(now_ - fluid.last));
  fluid.last = now_;
  fluid.rate = rate;
  ++fluid.version;
  if (rate > 0) schedule(now_ + ceil_ns(fluid.remaining / rate), type, target, fluid.version);
}

void Simulation::set_flow_rate(int f, double rate) {
  Flow& flow = flows_[static_cast<std::size_t>(f)];
  flow.remaining = std::max(0.0, flow.remaining - flow.rate * static_cast<double>(now_ - flow.last));
  flow.last = now_;
  flow.rate = rate;
  if (rate > 0) {
    flow_events_.set(f, FlowCompletion{now_ + ceil_ns(flow.remaining / rate), network_.creation(f)});
  } else {
    flow_events_.erase(f);
  }
}

void Simulation::mark_dirty(int gpu) {
  auto& state = gpus_[static_cast<std::size_t>(gpu)];
  if (state.dirty) return;
  state.dirty = true;
  dirty_gpus_.push_back(gpu);
}

void Simulation::mark_ports_changed(int gpu) {
  auto& state = gpus_[static_cast<std::size_t>(gpu)];
  if (state.ports_changed || state.comm_ports.empty()) return;
  state.ports_changed = true;
  ports_changed_gpus_.push_back(gpu);
}

/*
 * A flow completion at the same time as another event: completions are of class 0, and all carry
 * network_seq_, the sequence number of the recompute that last set their rates.
 */
bool Simulation::flow_event_first() const {
  if (flow_events_.empty()) return false;
  if (events_.empty()) return true;
  const Event& e = events_.top();
  const TimeNs t = flow_events_.top().key.time;
  if (t != e.time) return t < e.time;
  return e.cls != 0 || network_seq_ < e.seq;
}

void Simulation::check_all_ran() const {
  for (std::size_t i = 0; i < timing_.size(); ++i) {
    if (timing_[i].end >= 0) continue;
    const Op& op = ops_[i];
    std::string why = deps_left_[i] > 0         ? "waits on a dependency that never finished"
                      : !op.is_host_launched()  ? "waits for its pool to start"
                      : timing_[i].launched < 0 ? "was never launched by its host thread"
                      : timing_[i].start < 0    ? "waits behind its stream"
                                                : "waits for collective peers";
    throw InternalError("op " + std::to_string(i) + " '" + op.name + "' on rank " + std::to_string(op.rank) +
                        " never finished: it " + why +
                        " (a dependency cycle or a collective some member never joins)");
  }
}

}  // namespace moesim::sim::detail

namespace moesim::sim {
RunResult run(const Platform& platform, const Program& program) {
  return run(platform, program, JitterSpec{});
}

RunResult run(const Platform& platform, const Program& program, const JitterSpec& jitter) {
  if (platform.backend == Backend::SIMGRID) return detail::run_on_simgrid(platform, program, jitter);
  detail::Simulation simulation(platform, program, jitter);
  return simulation.run();
}
}  // namespace moesim::sim
