#include "moesim/sim/Analysis.hpp"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

#include "moesim/common/Error.hpp"

namespace moesim::sim {
namespace {

using Interval = std::pair<TimeNs, TimeNs>;
/** Compact (CSR) storage: a per-rank program of a thousand GPUs has millions of ops. */
using OpGraph = boost::compressed_sparse_row_graph<boost::directedS>;

/** Edges: data dependencies, in-order streams, and each host thread's program order. */
OpGraph build_graph(const Program& program) {
  const auto& ops = program.ops();
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::map<std::pair<int, int>, OpId> last_on_stream;
  std::vector<OpId> last_on_host(static_cast<std::size_t>(program.world_size()), NO_OP);
  for (OpId id = 0; id < static_cast<OpId>(ops.size()); ++id) {
    const Op& op = ops[static_cast<std::size_t>(id)];
    const auto to = static_cast<std::size_t>(id);
    for (OpId d : op.deps) edges.emplace_back(static_cast<std::size_t>(d), to);
    if (op.kind != OpKind::HOST && op.is_host_launched()) {
      auto [it, fresh] = last_on_stream.try_emplace({op.rank, op.stream}, id);
      if (!fresh) edges.emplace_back(static_cast<std::size_t>(it->second), to);
      it->second = id;
    }
    if (!op.is_host_launched()) continue;
    OpId& host_last = last_on_host[static_cast<std::size_t>(op.rank)];
    if (host_last != NO_OP) edges.emplace_back(static_cast<std::size_t>(host_last), to);
    host_last = id;
  }
  return OpGraph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), ops.size());
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

/** Per-rank metrics from one pass over the ops: each rank's intervals are collected, then measured. */
std::vector<RankMetrics> rank_metrics(const Program& program, const RunResult& result) {
  const auto world = static_cast<std::size_t>(program.world_size());
  std::vector<RankMetrics> metrics(world);
  std::vector<std::vector<Interval>> compute(world), comm(world);
  for (OpId id = 0; id < static_cast<OpId>(program.ops().size()); ++id) {
    const Op& op = program.op(id);
    const auto r = static_cast<std::size_t>(op.rank);
    RankMetrics& m = metrics[r];
    const OpTiming& t = result.ops[static_cast<std::size_t>(id)];
    m.end_ns = std::max(m.end_ns, t.end);
    if (op.is_host_launched()) m.host_launch_ns += t.launched - t.launch_begin;
    if (op.kind == OpKind::HOST || op.kind == OpKind::TASK) continue;  // tasks run inside their pool
    (op.is_comm() ? comm[r] : compute[r]).emplace_back(t.start, t.end);
    m.busy_by_category[op.category] += t.end - t.start;
  }
  std::vector<RankMetrics> simulated;
  for (int rank : program.simulated_ranks()) {
    const auto r = static_cast<std::size_t>(rank);
    RankMetrics& m = metrics[r];
    m.rank = rank;
    m.compute_busy_ns = union_length(compute[r]);
    m.comm_busy_ns = union_length(comm[r]);
    m.exposed_comm_ns = uncovered_length(comm[r], compute[r]);
    std::vector<Interval> all = std::move(compute[r]);
    all.insert(all.end(), comm[r].begin(), comm[r].end());
    m.idle_ns = m.end_ns - union_length(std::move(all));
    m.overlap_pct =
        m.comm_busy_ns > 0 ? 100.0 * (1.0 - static_cast<double>(m.exposed_comm_ns) / m.comm_busy_ns) : 0.0;
    simulated.push_back(std::move(m));
  }
  return simulated;
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
  a.ranks = rank_metrics(program, result);
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
