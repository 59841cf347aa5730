// The engine's side of `--engine simgrid`: its time steps driven by SimGrid, its flows as SimGrid comms.
#include <algorithm>

#include "../Simulation.hpp"
#include "SimGridNetwork.hpp"

namespace moesim::sim::detail {

/*
 * SimGrid owns the clock between the engine's events: the engine lets it run until its next event, or
 * until comms complete first, then handles what happened at that instant exactly as the analytic engine
 * does (same op lifecycle, same kernel and port rates) and hands the port rates to SimGrid.
 */
void Simulation::run_on_grid() {
  std::vector<int> done;
  while (!events_.empty() || live_flows_ > 0) {
    const TimeNs next = events_.empty() ? -1 : events_.top().time;
    now_ = grid_->advance(next, done);
    for (int f : done) {
      ++processed_;
      finish_flow(f);
    }
    handle_events_at_now();
    settle_step();
  }
}

int Simulation::add_grid_flow(Flow flow, double bytes, int src, int src_port, int dst, int dst_port) {
  flow.remaining = bytes;
  flow.last = now_;
  int id = 0;
  if (free_grid_ids_.empty()) {
    id = static_cast<int>(flows_.size());
    flows_.push_back(std::move(flow));
  } else {
    id = free_grid_ids_.back();
    free_grid_ids_.pop_back();
    flows_[static_cast<std::size_t>(id)] = std::move(flow);
  }
  ++live_flows_;
  network_dirty_ = true;
  grid_->start_flow(id, src, src_port, dst, dst_port, bytes);
  return id;
}

/*
 * A collective's data as comms between its members' port hosts: an all-to-all one comm per ordered pair
 * with bytes (every member's, symmetric programs included), a ring collective one comm per hop carrying
 * the bus bytes. A pipelined ring moves at its slowest hop's pace, so every member waits for every hop
 * (as for the analytic engine's single ring flow); a hop that finishes early frees its links early.
 */
void Simulation::begin_grid_flows(int c) {
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  auto& st = collectives_[static_cast<std::size_t>(c)];
  const int n = static_cast<int>(spec.group.size());
  if (n < 2) return;
  const bool ring = spec.kind != CollectiveKind::ALL_TO_ALL;
  auto start = [&](int i, int j, double bytes) {
    if (bytes <= 0) return;
    if (st.ports.empty()) open_ports(c);
    const int fold = spec.transport == Transport::COPY_ENGINE ? n : 0;
    auto port = [&](int offset) {
      return st.ports[static_cast<std::size_t>(fold > 0 ? offset % fold : offset)];
    };
    Flow f;
    f.collective = c;
    f.sender = i;
    f.receiver = j;
    f.whole_ring = ring;
    hold_members(st, f);
    ++st.grid_flows;
    add_grid_flow(std::move(f), bytes, spec.group[static_cast<std::size_t>(i)], port(i),
                  spec.group[static_cast<std::size_t>(j)], port(n + j));
  };
  if (spec.kind == CollectiveKind::ALL_TO_ALL) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (spec.group[static_cast<std::size_t>(i)] == spec.group[static_cast<std::size_t>(j)]) continue;
        start(i, j, spec.pairs()[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
      }
    }
    return;
  }
  const double factor = spec.kind == CollectiveKind::ALL_REDUCE ? 2.0 * (n - 1) / n : 1.0 * (n - 1) / n;
  for (int i = 0; i < n; ++i) start(i, (i + 1) % n, factor * spec.bytes);
}

}  // namespace moesim::sim::detail
