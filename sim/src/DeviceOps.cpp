// Device-side ops: persistent kernels (POOL) with their tile tasks (TASK), and one-sided transfers.
#include <algorithm>

#include "Simulation.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::sim::detail {

/*
 * A TASK is ready once its deps have finished and its pool has started; it then joins the pool's FIFO
 * and takes the next free processor. A TRANSFER starts once its deps have finished: after its latency
 * it is a flow over the links from its source to its destination GPU.
 */
void Simulation::try_start_device(OpId id) {
  const auto i = static_cast<std::size_t>(id);
  const Op& op = ops_[i];
  auto& t = timing_[i];
  if (t.start >= 0 || deps_left_[i] > 0) return;
  if (op.kind == OpKind::TRANSFER) {
    t.start = now_;
    t.binding = deps_last_[i] == NO_OP ? Binding::NONE : Binding::DEPENDENCY;
    t.binding_op = deps_last_[i];
    schedule(now_ + ceil_ns(op.latency_ns + platform_.extra_latency_ns(op.rank, op.dst_rank)),
             EventType::TRANSFER_START, id);
    return;
  }
  auto& pool = pools_[static_cast<std::size_t>(pool_index_[i])];
  if (!pool.started) return;  // start_pool() offers it again
  t.binding = deps_last_[i] == NO_OP ? Binding::NONE : Binding::DEPENDENCY;
  t.binding_op = deps_last_[i];
  t.start = -2;  // queued: not yet on a processor
  pool.ready.push_back(id);
  dispatch_tasks(pool);
}

void Simulation::start_pool(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  auto& gpu = gpus_[static_cast<std::size_t>(op.rank)];
  gpu.pool_sms += op.pool_sms;
  mark_dirty(op.rank);
  auto& pool = pools_[static_cast<std::size_t>(pool_index_[static_cast<std::size_t>(id)])];
  pool.started = true;
  if (pool.remaining == 0) {
    gpu.pool_sms -= op.pool_sms;
    finish_op(id);
    return;
  }
  for (OpId task : pool.tasks) try_start_device(task);
}

void Simulation::dispatch_tasks(PoolState& pool) {
  while (pool.free > 0 && pool.ready_head < pool.ready.size()) {
    OpId id = pool.ready[pool.ready_head++];
    --pool.free;
    auto& t = timing_[static_cast<std::size_t>(id)];
    t.start = now_;
    schedule(now_ + ceil_ns(ops_[static_cast<std::size_t>(id)].task_ns), EventType::TASK_DONE, id);
  }
}

void Simulation::finish_task(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  auto& pool = pools_[static_cast<std::size_t>(pool_index_[static_cast<std::size_t>(id)])];
  ++pool.free;
  --pool.remaining;
  finish_op(id);
  // A task that waited for a processor (not for data) was released by this one.
  const std::size_t before = pool.ready_head;
  dispatch_tasks(pool);
  for (std::size_t k = before; k < pool.ready_head; ++k) {
    auto& t = timing_[static_cast<std::size_t>(pool.ready[k])];
    if (t.binding == Binding::NONE || deps_time_[static_cast<std::size_t>(pool.ready[k])] < now_) {
      t.binding = Binding::STREAM;
      t.binding_op = id;
    }
  }
  if (pool.remaining == 0) {
    const Op& kernel = ops_[static_cast<std::size_t>(op.pool)];
    auto& gpu = gpus_[static_cast<std::size_t>(kernel.rank)];
    gpu.pool_sms -= kernel.pool_sms;
    mark_dirty(kernel.rank);
    finish_op(op.pool);
  }
}

void Simulation::begin_transfer(OpId id) {
  const Op& op = ops_[static_cast<std::size_t>(id)];
  if (op.rank == op.dst_rank || op.bytes <= 0) {
    finish_op(id);  // a local hand-over: the data already sits in the rank's own symmetric buffer
    return;
  }
  Flow f;
  f.transfer = id;
  if (grid_ != nullptr) {
    add_grid_flow(std::move(f), op.bytes, op.rank, -1, op.dst_rank, -1);
    return;
  }
  const Route route = platform_.route(op.rank, op.dst_rank);
  std::vector<int> links;
  for (int link : route.source_side) links.push_back(link_resource_[static_cast<std::size_t>(link)]);
  for (int link : route.destination_side) links.push_back(link_resource_[static_cast<std::size_t>(link)]);
  add_flow(std::move(f), op.bytes, links);
}

}  // namespace moesim::sim::detail
