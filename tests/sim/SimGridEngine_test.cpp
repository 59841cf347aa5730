// --engine simgrid on hand-computed cases: SimGrid's network (LV08 without its TCP corrections) must give
// the closed forms the analytic engine gives wherever max-min sharing decides, within a nanosecond of
// rounding; where the two engines model the traffic differently the test says how.
#include <gtest/gtest.h>

#include "SimFixtures.hpp"
#include "moesim/common/Error.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

namespace {

Platform on_simgrid(Platform p) {
  p.backend = Backend::SIMGRID;
  return p;
}

CollectiveSpec balanced_a2a(int n, double pair_bytes) {
  CollectiveSpec s;
  s.name = "a2a";
  s.kind = CollectiveKind::ALL_TO_ALL;
  for (int i = 0; i < n; ++i) s.group.push_back(i);
  s.pair_bytes.assign(static_cast<std::size_t>(n),
                      std::vector<double>(static_cast<std::size_t>(n), pair_bytes));
  return s;
}

CollectiveSpec ring_all_reduce(int n, double bytes) {
  CollectiveSpec s;
  s.name = "ar";
  s.kind = CollectiveKind::ALL_REDUCE;
  for (int i = 0; i < n; ++i) s.group.push_back(i);
  s.bytes = bytes;
  return s;
}

/** Every simulated rank: optional kernel `work` on stream 0, its member of `spec` on stream 1. */
std::vector<OpId> add_everywhere(Program& p, const CollectiveSpec& spec,
                                 const KernelWork& work = compute(0)) {
  const int c = p.add_collective(spec);
  std::vector<OpId> members;
  for (int r : spec.group) {
    if (!p.is_simulated(r)) continue;
    p.set_streams(r, {"compute", "comm"});
    if (work.compute_ns > 0 || work.memory_ns > 0) p.add_kernel(r, 0, "gemm", "x", work, 0);
    members.push_back(p.add_collective_member(c, r, 1, "comm", 0));
  }
  return members;
}

TimeNs end_of(const RunResult& r, OpId id) {
  return r.ops[static_cast<std::size_t>(id)].end;
}

}  // namespace

TEST(SimGridEngine, BalancedAllToAllMatchesBusBandwidthFullAndSymmetric) {
  // As Collective.BalancedAllToAllMatchesBusBandwidth: α + 7e6 B / 100 B/ns = 71000 ns. The symmetric
  // program moves all 56 pairs through SimGrid; each port still carries 7 flows at 100/7 B/ns.
  for (bool symmetric : {false, true}) {
    Program p(8, symmetric);
    auto m = add_everywhere(p, balanced_a2a(8, 1e6));
    auto r = run(on_simgrid(test_platform()), p);
    for (OpId id : m) EXPECT_NEAR(end_of(r, id), 71000, 1) << symmetric;
  }
}

TEST(SimGridEngine, RingAllReduceIsAlphaBeta) {
  // 2(n-1)·α + 2(n-1)/n·S/busbw = 6000 + 120000 (n = 4, S = 8e6, 100 B/ns): one comm per hop.
  Program p(4, false);
  auto m = add_everywhere(p, ring_all_reduce(4, 8e6));
  auto r = run(on_simgrid(test_platform()), p);
  for (OpId id : m) EXPECT_NEAR(end_of(r, id), 126000, 1);
}

TEST(SimGridEngine, UnevenPairFinishesAsTheTransportsPortsAllow) {
  // 0→1 carries 2e6 B, 1→0 1e6 B. NCCL kernels: each flow alone on its ports at 100 B/ns, both members end
  // at 21000. Copy engines (as in Collective_test): the two copies split one 200 B/ns budget per GPU until
  // 1→0 lands at 11000; 0→1 then has it to itself and ends at 16000.
  for (auto [transport, expected] :
       {std::pair{Transport::SM_KERNEL, 21000}, {Transport::COPY_ENGINE, 16000}}) {
    Program p(2, false);
    CollectiveSpec s = balanced_a2a(2, 0);
    s.pair_bytes = {{0, 2e6}, {1e6, 0}};
    s.transport = transport;
    auto m = add_everywhere(p, s);
    auto r = run(on_simgrid(test_platform()), p);
    EXPECT_NEAR(end_of(r, m[0]), expected, 1);
    EXPECT_NEAR(end_of(r, m[1]), expected, 1);
  }
}

TEST(SimGridEngine, ContentionSlowsBothSidesWithTheSharedKernelModel) {
  // Collective.ContentionSlowsBothSides: the comm at 100/1.25 B/ns ends at 88500, the half-GPU GEMM,
  // 1.1x slower while comm runs, at 108046: the kernel side is the analytic engine's own code.
  Program p(8, false);
  KernelWork half = compute(100000);
  half.sm_fraction = 0.5;
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), half);
  auto r = run(on_simgrid(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25})), p);
  EXPECT_NEAR(end_of(r, m[0]), 88500, 1);
  EXPECT_NEAR(end_of(r, 0), 108046, 1);
}

TEST(SimGridEngine, OneSidedTransfersShareTheirLinks) {
  // Two puts of 1e6 B into GPU 2 (ingress port 1000 B/ns): 500 B/ns each → 2000 ns, after 100 ns latency.
  Program p(8, false);
  OpId a = p.add_transfer(0, 2, "put", "x", 1e6, Transport::SM_KERNEL, 100);
  OpId b = p.add_transfer(1, 2, "put", "x", 1e6, Transport::SM_KERNEL, 100);
  auto r = run(on_simgrid(test_platform()), p);
  EXPECT_NEAR(end_of(r, a), 2100, 1);
  EXPECT_NEAR(end_of(r, b), 2100, 1);
}

TEST(SimGridEngine, AcrossNodesARingsFastHopsTakeLinkShareTheAnalyticLockstepRingLeaves) {
  // Where the engines differ: a ring over two nodes (16 ranks, S = 1e6 B, 1.875e6 B per hop, bus 80 B/ns)
  // whose two node-crossing hops go through 10 B/ns NICs, while node 0 runs an all-to-all (1e6 B a pair,
  // bus 300 B/ns: the 100 B/ns GPU ports bind). No latency.
  //   analytic: the ring is one lockstep flow at the NIC's 10 B/ns on every hop, so GPUs 0-6 have 90 B/ns
  //     of egress (and GPUs 1-7 of ingress) left for their 7 all-to-all flows: 1e6 / (90/7) = 77778 ns.
  //   SimGrid: each intra-node hop is a comm of its own, no longer held to the NIC's pace, and takes its
  //     max-min share of the GPU port: 100/8 = 12.5 B/ns for every flow there, so 1e6 / 12.5 = 80000 ns.
  //   Both: the ring ends with its NIC hops, 1.875e6 / 10 = 187500 ns.
  // A pipelined ring does move at its slowest hop's pace, so here the analytic engine is the closer one;
  // SimGrid's per-hop comms are what its s4u comms can express (docs/simgrid-engine.md).
  Topology topo;
  topo.nodes = 2;
  topo.gpu_port_Bps = 100 * GBps;
  topo.nic_Bps = 10 * GBps;
  auto cost = [](const CollectiveQuery& q) { return CollectiveCost{(q.spans_nodes ? 80 : 300) * GBps, 0}; };
  const Platform analytic = make_platform(topo, GpuResources{132, 0, 1.0, 1.0}, cost);
  Program p(16, false);
  const int c_ring = p.add_collective(ring_all_reduce(16, 1e6));
  const int c_a2a = p.add_collective(balanced_a2a(8, 1e6));
  std::vector<OpId> ring_members, a2a_members;
  for (int r = 0; r < 16; ++r) {
    p.set_streams(r, {"ring", "a2a"});
    ring_members.push_back(p.add_collective_member(c_ring, r, 0, "ar", 0));
    if (r < 8) a2a_members.push_back(p.add_collective_member(c_a2a, r, 1, "a2a", 0));
  }
  const auto a = run(analytic, p);
  const auto s = run(on_simgrid(analytic), p);
  EXPECT_NEAR(end_of(a, a2a_members[3]), 77778, 1);
  EXPECT_NEAR(end_of(s, a2a_members[3]), 80000, 1);
  EXPECT_NEAR(end_of(a, ring_members[5]), 187500, 1);
  EXPECT_NEAR(end_of(s, ring_members[5]), 187500, 1);
}
