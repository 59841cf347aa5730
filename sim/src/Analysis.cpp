#include "moesim/sim/Analysis.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

#include "moesim/common/Error.hpp"

namespace moesim::sim {
namespace {

using Interval = std::pair<TimeNs, TimeNs>;
using OpGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

/** Edges: data dependencies, in-order streams, and each host thread's program order. */
OpGraph build_graph(const Program& program) {
  const auto& ops = program.ops();
  OpGraph g(ops.size());
  std::map<std::pair<int, int>, OpId> last_on_stream;
  std::map<int, OpId> last_on_host;
  for (OpId id = 0; id < static_cast<OpId>(ops.size()); ++id) {
    const Op& op = ops[static_cast<std::size_t>(id)];
    for (OpId d : op.deps) boost::add_edge(static_cast<std::size_t>(d), static_cast<std::size_t>(id), g);
    if (op.kind != OpKind::HOST && op.is_host_launched()) {
      auto [it, fresh] = last_on_stream.try_emplace({op.rank, op.stream}, id);
      if (!fresh) boost::add_edge(static_cast<std::size_t>(it->second), static_cast<std::size_t>(id), g);
      it->second = id;
    }
    if (!op.is_host_launched()) continue;
    auto [h, first] = last_on_host.try_emplace(op.rank, id);
    if (!first) boost::add_edge(static_cast<std::size_t>(h->second), static_cast<std::size_t>(id), g);
    h->second = id;
  }
  return g;
}

TimeNs union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  TimeNs total = 0, cur_begin = 0, cur_end = -1;
  for (auto [b, e] : v) {
    if (e <= b) continue;
    if (b > cur_end) {
      if (cur_end > cur_begin) total += cur_end - cur_begin;
      cur_begin = b;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_begin) total += cur_end - cur_begin;
  return total;
}

/** Length of the parts of `a` not covered by `b`. */
TimeNs uncovered_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> both = a;
  both.insert(both.end(), b.begin(), b.end());
  return union_length(both) - union_length(b);
}

RankMetrics rank_metrics(const Program& program, const RunResult& result, int rank) {
  RankMetrics m;
  m.rank = rank;
  std::vector<Interval> compute, comm;
  for (OpId id = 0; id < static_cast<OpId>(program.ops().size()); ++id) {
    const Op& op = program.op(id);
    if (op.rank != rank) continue;
    const OpTiming& t = result.ops[static_cast<std::size_t>(id)];
    m.end_ns = std::max(m.end_ns, t.end);
    if (op.is_host_launched()) m.host_launch_ns += t.launched - t.launch_begin;
    if (op.kind == OpKind::HOST || op.kind == OpKind::TASK) continue;  // tasks run inside their pool
    (op.is_comm() ? comm : compute).emplace_back(t.start, t.end);
    m.busy_by_category[op.category] += t.end - t.start;
  }
  m.compute_busy_ns = union_length(compute);
  m.comm_busy_ns = union_length(comm);
  m.exposed_comm_ns = uncovered_length(comm, compute);
  std::vector<Interval> all = compute;
  all.insert(all.end(), comm.begin(), comm.end());
  m.idle_ns = m.end_ns - union_length(all);
  m.overlap_pct =
      m.comm_busy_ns > 0 ? 100.0 * (1.0 - static_cast<double>(m.exposed_comm_ns) / m.comm_busy_ns) : 0.0;
  return m;
}

/** The member of op's collective that arrived last (it held everyone back). */
OpId last_arrival(const Program& program, const RunResult& result, OpId id) {
  OpId last = id;
  for (OpId m : program.members(program.op(id).collective)) {
    if (result.ops[static_cast<std::size_t>(m)].start > result.ops[static_cast<std::size_t>(last)].start)
      last = m;
  }
  return last;
}

/*
 * Walk back from the op that ends last along the condition that released each op: a dependency or
 * the stream (GPU time), the host's launch of it (host time, following the host's chain of launches),
 * or the last collective peer to arrive.
 */
std::vector<PathSegment> walk_critical_path(const Program& program, const RunResult& result) {
  std::vector<PathSegment> path;
  if (program.ops().empty()) return path;
  OpId cur = 0;
  for (OpId id = 0; id < static_cast<OpId>(result.ops.size()); ++id) {
    if (result.ops[static_cast<std::size_t>(id)].end > result.ops[static_cast<std::size_t>(cur)].end)
      cur = id;
  }
  bool on_host = false;
  std::size_t guard = 0;
  while (cur != NO_OP && guard++ < 4 * result.ops.size() + 8) {
    const Op& op = program.op(cur);
    const OpTiming& t = result.ops[static_cast<std::size_t>(cur)];
    if (on_host || op.kind == OpKind::HOST) {
      std::string cat = op.kind == OpKind::HOST ? op.category : "launch";
      path.push_back({cur, t.launch_begin, t.launched, cat});
      if (op.kind == OpKind::HOST && t.binding == Binding::DEPENDENCY) {
        on_host = false;
        cur = t.binding_op;
        continue;
      }
      on_host = true;
      cur = t.binding == Binding::LAUNCH || op.kind != OpKind::HOST ? t.binding_op : NO_OP;
      if (op.kind != OpKind::HOST) {
        // A launch follows the previous one on the same host thread only if the host was busy until then.
        OpId prev = t.binding_op;
        while (prev != NO_OP && program.op(prev).rank != op.rank) prev = NO_OP;
        cur = prev;
      }
      continue;
    }
    if (op.kind == OpKind::COLLECTIVE) {
      path.push_back({cur, t.data_start, t.end, op.category});
      OpId last = last_arrival(program, result, cur);
      if (last != cur) {
        path.push_back({cur, result.ops[static_cast<std::size_t>(last)].start, t.data_start, "wait"});
        cur = last;
        continue;
      }
      if (t.data_start > t.start) path.push_back({cur, t.start, t.data_start, "wait"});
    } else {
      path.push_back({cur, t.start, t.end, op.category});
    }
    if (t.binding == Binding::LAUNCH) {
      on_host = true;
      continue;  // the same op, now its launch interval
    }
    cur = t.binding == Binding::NONE ? NO_OP : t.binding_op;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

void check_acyclic(const Program& program) {
  OpGraph g = build_graph(program);
  std::vector<std::size_t> order;
  try {
    boost::topological_sort(g, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    throw ScheduleError("program: the op graph has a dependency cycle");
  }
}

Analysis analyze(const Program& program, const RunResult& result) {
  Analysis a;
  for (int r : program.simulated_ranks()) a.ranks.push_back(rank_metrics(program, result, r));
  auto raw = walk_critical_path(program, result);
  // Clip overlaps and mark holes so the segments tile [0, makespan] once.
  TimeNs cursor = 0;
  for (auto seg : raw) {
    seg.begin = std::max(seg.begin, cursor);
    if (seg.end <= seg.begin) continue;
    if (seg.begin > cursor) a.critical_path.push_back({NO_OP, cursor, seg.begin, "gap"});
    a.critical_path.push_back(seg);
    cursor = seg.end;
  }
  for (const auto& seg : a.critical_path) a.critical_path_by_category[seg.category] += seg.end - seg.begin;
  return a;
}

}  // namespace moesim::sim
