// Collectives: alpha-beta closed forms, the straggler effect, contention, link sharing, symmetric runs.
#include <gtest/gtest.h>

#include "SimFixtures.hpp"
#include "moesim/common/Error.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

namespace {

CollectiveSpec balanced_a2a(int n, double pair_bytes, int first_rank = 0) {
  CollectiveSpec s;
  s.name = "a2a";
  s.kind = CollectiveKind::ALL_TO_ALL;
  for (int i = 0; i < n; ++i) s.group.push_back(first_rank + i);
  s.pair_bytes.assign(static_cast<std::size_t>(n),
                      std::vector<double>(static_cast<std::size_t>(n), pair_bytes));
  return s;
}

/** Every rank of `n`: optional compute kernel `work` on stream 0, then its member of `spec` on stream 1. */
std::vector<OpId> add_everywhere(Program& p, const CollectiveSpec& spec, const KernelWork& work,
                                 double straggler_ns = 0) {
  int c = p.add_collective(spec);
  std::vector<OpId> members;
  for (int r : spec.group) {
    if (!p.is_simulated(r)) continue;
    p.set_streams(r, {"compute", "comm"});
    std::vector<OpId> deps;
    if (r == 3 && straggler_ns > 0) deps.push_back(p.add_kernel(r, 0, "late", "x", compute(straggler_ns), 0));
    if (work.compute_ns > 0 || work.memory_ns > 0) p.add_kernel(r, 0, "gemm", "x", work, 0);
    members.push_back(p.add_collective_member(c, r, 1, "comm", 0, deps));
  }
  return members;
}

std::vector<OpId> add_everywhere(Program& p, const CollectiveSpec& spec, double compute_ns = 0,
                                 double straggler_ns = 0) {
  return add_everywhere(p, spec, compute(compute_ns), straggler_ns);
}

/** Rank 0's collective member and kernel B of a program where every rank's stream 0 runs kernel A
 * (compute, 50000 ns, fills the GPU), the member arrives on stream 1 during A, then B follows A. */
struct MemberBetweenKernels {
  OpId member = NO_OP, after = NO_OP;
};
MemberBetweenKernels add_member_between_kernels(Program& p, const KernelWork& after) {
  const int c = p.add_collective(balanced_a2a(8, 1e6));
  MemberBetweenKernels ids;
  for (int r = 0; r < 8; ++r) {
    p.set_streams(r, {"compute", "comm"});
    p.add_kernel(r, 0, "a", "x", compute(50000), 0);
    OpId m = p.add_collective_member(c, r, 1, "comm", 0, {});
    OpId b = p.add_kernel(r, 0, "b", "x", after, 0);
    if (r == 0) ids = {m, b};
  }
  return ids;
}

}  // namespace

TEST(Collective, RingAllReduceIsAlphaBeta) {
  // n = 4, S = 8e6 B, busbw 100 GB/s (100 B/ns), step latency 1000 ns:
  // T = 2(n-1)·α + 2(n-1)/n · S / busbw = 6·1000 + 1.5·8e6/100 = 6000 + 120000 = 126000 ns.
  Program p(4, false);
  CollectiveSpec s;
  s.name = "ar";
  s.kind = CollectiveKind::ALL_REDUCE;
  s.group = {0, 1, 2, 3};
  s.bytes = 8e6;
  auto m = add_everywhere(p, s);
  auto r = run(test_platform(), p);
  for (OpId id : m) EXPECT_EQ(r.ops[static_cast<std::size_t>(id)].end, 126000);
}

TEST(Collective, AllGatherAndReduceScatterMoveNMinusOneOverN) {
  // n = 8, S = 8e6: T = (n-1)·α + (n-1)/n·S/busbw = 7000 + 70000 = 77000 ns.
  for (auto kind : {CollectiveKind::ALL_GATHER, CollectiveKind::REDUCE_SCATTER}) {
    Program p(8, false);
    CollectiveSpec s;
    s.name = "ag";
    s.kind = kind;
    s.group = {0, 1, 2, 3, 4, 5, 6, 7};
    s.bytes = 8e6;
    auto m = add_everywhere(p, s);
    auto r = run(test_platform(), p);
    EXPECT_EQ(r.ops[static_cast<std::size_t>(m[5])].end, 77000);
  }
}

TEST(Collective, BalancedAllToAllMatchesBusBandwidth) {
  // n = 8, 1e6 B per pair incl. self: nccl-tests size S = 8e6, bus bytes = S·(n-1)/n = 7e6.
  // T = α + 7e6/100 = 1000 + 70000 = 71000 ns.
  Program p(8, false);
  auto m = add_everywhere(p, balanced_a2a(8, 1e6));
  auto r = run(test_platform(), p);
  for (OpId id : m) EXPECT_EQ(r.ops[static_cast<std::size_t>(id)].end, 71000);
}

TEST(Collective, StragglerDelaysEveryMember) {
  // Rank 3 computes 50000 ns before joining: everyone's data phase starts at 50000 and ends at 121000;
  // rank 0's member started at 0 and waited 50000 ns.
  Program p(8, false);
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), 0, 50000);
  auto r = run(test_platform(), p);
  for (OpId id : m) {
    EXPECT_EQ(r.ops[static_cast<std::size_t>(id)].data_start, 50000);
    EXPECT_EQ(r.ops[static_cast<std::size_t>(id)].end, 121000);
  }
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].start, 0);
}

TEST(Collective, UnevenAllToAllFinishesWithItsLargestPair) {
  // 2 ranks: 0→1 carries 2e6 B, 1→0 carries 1e6 B. Each pair's flow alone at 100 B/ns (n−1 = 1 flow per
  // port): rank 1 receives 2e6 → ends 1000 + 20000 = 21000; rank 0 sends it → also 21000. Both members touch
  // that flow.
  Program p(2, false);
  CollectiveSpec s = balanced_a2a(2, 0);
  s.pair_bytes = {{0, 2e6}, {1e6, 0}};
  auto m = add_everywhere(p, s);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 21000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[1])].end, 21000);
}

TEST(Collective, CopyEngineGpuSharesOneBudgetForCopiesInAndOut) {
  // The same uneven pair over copy engines (bus 100 B/ns): each GPU has one port of 200 B/ns for both
  // directions. Both flows cross both ports and split them 100 : 100 until 1→0 (1e6 B) lands at
  // 1000 + 10000 = 11000; 0→1 then has the port to itself, 1e6 B left at 200 → 16000. An even
  // all-to-all (8 ranks, 1e6 B a pair) still reproduces the table: 1000 + 7e6 / 100 = 71000, in a
  // symmetric run (rank 0's sends only) too.
  Program p(2, false);
  CollectiveSpec s = balanced_a2a(2, 0);
  s.pair_bytes = {{0, 2e6}, {1e6, 0}};
  s.transport = Transport::COPY_ENGINE;
  auto m = add_everywhere(p, s);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 16000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[1])].end, 16000);
  for (bool symmetric : {false, true}) {
    Program even(8, symmetric);
    CollectiveSpec spec = balanced_a2a(8, 1e6);
    spec.transport = Transport::COPY_ENGINE;
    auto members = add_everywhere(even, spec);
    auto result = run(test_platform(), even);
    EXPECT_EQ(result.ops[static_cast<std::size_t>(members[0])].end, 71000) << symmetric;
  }
}

TEST(Collective, CommOverlapsComputeFreelyWithoutContention) {
  // No comm SMs, no slowdowns: compute (100000) and the all-to-all (71000) run side by side unchanged.
  Program p(8, false);
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), 100000);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 71000);
  EXPECT_EQ(r.ops[0].end, 100000);  // rank 0's gemm is op 0, its member op 1
}

TEST(Collective, ContentionSlowsBothSides) {
  // A compute kernel that fills half the GPU (66 of 132 SMs) leaves room for the comm kernel's 33, so
  // both run at once. Comm: latency 1000, then 7e6 B at 100/1.25 = 80 B/ns = 87500 → ends 88500.
  // Compute (100000 ns alone) keeps its 66 SMs and slows 1.1x while comm runs: by 88500 it has done
  // 88500/1.1 = 80454.55 ns of work; 19545.45 left alone → ends 108045.45 → 108046 ns.
  Program p(8, false);
  KernelWork half = compute(100000);
  half.sm_fraction = 0.5;
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), half);
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25}), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 88500);
  EXPECT_EQ(r.ops[0].end, 108046);  // rank 0's gemm is op 0
}

TEST(Collective, ACollectivesOwnSmCountReplacesThePlatforms) {
  // As above, but this all-to-all's kernel holds 99 SMs (DeepEP-style reservation) instead of the
  // platform's 33: 132 - 66 = 66 are free beside the half-GPU kernel, fewer than 99, so the comm kernel
  // queues until the kernel ends at 100000 (alone: no 1.1x), then runs alone: + 1000 + 70000 = 171000.
  Program p(8, false);
  KernelWork half = compute(100000);
  half.sm_fraction = 0.5;
  CollectiveSpec spec = balanced_a2a(8, 1e6);
  spec.sms = 99;
  auto m = add_everywhere(p, spec, half);
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25}), p);
  EXPECT_EQ(r.ops[0].end, 100000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 171000);
}

TEST(Collective, KernelsOwnCommDragOverridesThePlatforms) {
  // As above, but the half-GPU kernel drags comm 2x (a light kernel sharing SMs with the comm blocks, such
  // as the router's top-k) instead of the platform's 1.25x. The kernel, 1.1x slower throughout, ends at
  // 110000; by then the collective has moved (110000 - 1000) / 2 = 54500 ns of its 70000 ns of data, and
  // the 15500 left run alone: 125500.
  Program p(8, false);
  KernelWork half = compute(100000);
  half.sm_fraction = 0.5;
  half.comm_drag = 2.0;
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), half);
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25}), p);
  EXPECT_EQ(r.ops[0].end, 110000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 125500);
}

TEST(Collective, CommKernelStartsAtTheBoundaryOfAKernelThatFillsTheGpu) {
  // The GEMM (sm_fraction 1) was launched first and holds every SM; the comm kernel's blocks queue
  // behind it and start when it ends at 100000 (no preemption). The GEMM runs alone at full speed;
  // the collective then runs alone: 100000 + 1000 latency + 7e6 B / 100 B/ns = 171000.
  Program p(8, false);
  auto m = add_everywhere(p, balanced_a2a(8, 1e6), 100000);
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25}), p);
  EXPECT_EQ(r.ops[0].end, 100000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].data_start, 100000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 171000);
}

TEST(Collective, KernelsLaunchedAfterTheCommKernelQueueBehindIt) {
  // Stream 0 runs A (50000 ns) then B (100000 ns), both filling the GPU. The comm kernel arrives
  // during A, so it waits for A only: it takes its 33 SMs at 50000, before B starts there. B then
  // gets 99 SMs and slows 1.1·132/99 = 1.46667x while comm runs (latency 1000 + 70000 → ends
  // 121000): by then B has done 71000/1.46667 = 48409.09 ns of work; 51590.91 left alone → B ends
  // 172590.91 → 172591.
  Program p(8, false);
  const auto ids = add_member_between_kernels(p, compute(100000));
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.0}), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(ids.member)].end, 121000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(ids.after)].end, 172591);
}

TEST(Collective, CopyEngineCollectiveIsNotSlowedByCompute) {
  // The same contention settings, but a copy-engine all-to-all: it holds no SMs and its bandwidth does
  // not drop while compute runs, so both sides keep their alone times (71000 and 100000).
  Program p(8, false);
  CollectiveSpec spec = balanced_a2a(8, 1e6);
  spec.transport = Transport::COPY_ENGINE;
  auto m = add_everywhere(p, spec, 100000);
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.1, 1.25}), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 71000);
  EXPECT_EQ(r.ops[0].end, 100000);
}

TEST(Collective, CopyEngineTrafficTakesItsHbmShareFirst) {
  // HBM 1000 GB/s, 2 HBM bytes per copied byte: the copy-engine all-to-all (100 GB/s) takes 0.2 of the
  // HBM while its data moves (1000..71000) and keeps its own rate (ends 71000). The HBM-bound kernel
  // (100000 ns alone) does 1000 ns of work by 1000, then 0.8 x 70000 = 56000: 43000 left alone at
  // 71000 → ends 114000.
  Program p(8, false);
  CollectiveSpec spec = balanced_a2a(8, 1e6);
  spec.transport = Transport::COPY_ENGINE;
  auto m = add_everywhere(p, spec, memory(100000));
  auto r = run(test_platform(1, 100, 1000, GpuResources{132, 0, 1.0, 1.0, 1.0, 1000 * GBps, 4, 2, 1}), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(m[0])].end, 71000);
  EXPECT_EQ(r.ops[0].end, 114000);  // rank 0's HBM-bound kernel is op 0
}

TEST(Collective, CommKernelAndHbmBoundKernelShareHbmByTheirSms) {
  // Stream 0 runs A (compute, 50000 ns, fills the GPU) then B (HBM-bound, 100000 ns alone). The comm
  // kernel waits for A's end, takes 33 SMs; B gets 99. Its data moves from 51000: it would use 4 HBM
  // bytes per bus byte x 100 GB/s = 0.4 of the 1000 GB/s HBM, B all of it, so they split it 99 : 33:
  // B 0.75, the collective 0.25 → 62.5 GB/s: 7e6 B in 112000 ns → ends 163000. B: 1000 ns of work
  // alone by 51000, 0.75 x 112000 = 84000 by 163000, 15000 left alone → ends 178000. Without the HBM
  // model (hbm_Bps 0) B loses nothing (memory-bound, its SMs do not bind): ends 150000; comm 121000.
  for (double hbm : {1000 * GBps, 0.0}) {
    Program p(8, false);
    const auto ids = add_member_between_kernels(p, memory(100000));
    auto r = run(test_platform(1, 100, 1000, GpuResources{132, 33, 1.0, 1.0, 1.0, hbm, 4, 2, 1}), p);
    EXPECT_EQ(r.ops[static_cast<std::size_t>(ids.member)].end, hbm > 0 ? 163000 : 121000) << hbm;
    EXPECT_EQ(r.ops[static_cast<std::size_t>(ids.after)].end, hbm > 0 ? 178000 : 150000) << hbm;
  }
}

TEST(Collective, ComputeSlowsWhileCopyEngineCollectiveIsInFlight) {
  // compute_slowdown_with_copy 1.25: a compute-bound kernel (100000 ns alone) does 1/1.25 of its rate
  // while the copy-engine all-to-all is in flight (0..71000): 56800 ns of work, 43200 left → 114200. An
  // SM-kernel all-to-all with compute_slowdown_with_comm 1.0 and no SMs held leaves it at 100000.
  for (Transport transport : {Transport::COPY_ENGINE, Transport::SM_KERNEL}) {
    Program p(8, false);
    CollectiveSpec spec = balanced_a2a(8, 1e6);
    spec.transport = transport;
    add_everywhere(p, spec, 100000);
    auto r = run(test_platform(1, 100, 1000, GpuResources{132, 0, 1.0, 1.0, 1.25}), p);
    EXPECT_EQ(r.ops[0].end, transport == Transport::COPY_ENGINE ? 114200 : 100000);  // rank 0's GEMM
  }
}

TEST(Collective, MemoryBoundKernelStretchesByItsMemoryCommSlowdown) {
  // An HBM-bound kernel (100000 ns alone) with memory_comm_slowdown 1.25 beside an SM-kernel all-to-all that
  // holds no SMs and runs 0..71000 (no HBM model, so only the factor acts): 71000 / 1.25 = 56800 ns of work,
  // 43200 left alone -> 114200. With factor 1 it is memory-bound and loses nothing: 100000. A
  // copy-engine collective is not an SM kernel and leaves it at 100000 either way.
  for (double factor : {1.25, 1.0}) {
    for (Transport transport : {Transport::SM_KERNEL, Transport::COPY_ENGINE}) {
      Program p(8, false);
      CollectiveSpec spec = balanced_a2a(8, 1e6);
      spec.transport = transport;
      KernelWork work = memory(100000);
      work.memory_comm_slowdown = factor;
      add_everywhere(p, spec, work);
      auto r = run(test_platform(1, 100, 1000, GpuResources{132, 0, 2.0, 1.0, 1.0}), p);
      const bool stretched = factor > 1 && transport == Transport::SM_KERNEL;
      EXPECT_EQ(r.ops[0].end, stretched ? 114200 : 100000) << factor;
    }
  }
  Program bad(1, false);
  KernelWork work = memory(1000);
  work.memory_comm_slowdown = 0.5;
  EXPECT_THROW(bad.add_kernel(0, 0, "k", "compute", work, 0, {}), moesim::ScheduleError);
}

TEST(Collective, KernelsOwnCommSlowdownOverridesThePlatforms) {
  // The platform slows compute 2x beside comm kernels; a kernel with its own comm_slowdown 1.25 (a GEMM
  // of the profile's gemm_slowdown_with_comm table) uses that instead. The SM-kernel all-to-all holds no
  // SMs and runs 0..71000: at 1/1.25 the 100000 ns kernel does 56800 ns of work, 43200 left -> 114200; at
  // 1/2, 35500 done, 64500 left -> 135500.
  for (double own : {1.25, 0.0}) {
    Program p(8, false);
    KernelWork work = compute(100000);
    work.comm_slowdown = own;
    add_everywhere(p, balanced_a2a(8, 1e6), work);
    auto r = run(test_platform(1, 100, 1000, GpuResources{132, 0, 2.0, 1.0, 1.0}), p);
    EXPECT_EQ(r.ops[0].end, own > 0 ? 114200 : 135500) << own;
  }
}

TEST(Collective, ConcurrentCollectivesShareGpuPorts) {
  // Ports of 150 GB/s. Alone, each all-to-all is held to its 100 GB/s table rate (71000 ns).
  // Two at once: 14 flows per egress port, 150/14 each < 100/7, so the port binds: each moves 7e6 B at
  // 75 B/ns = 93333.3 ns after α → ends 94334 ns. SimGrid (--engine simgrid) gives each all-to-all a port
  // host per GPU and meets the same 14 flows on each 150 GB/s egress link, within a nanosecond of rounding.
  Topology topo;
  topo.gpu_port_Bps = 150 * GBps;
  auto cost = [](const CollectiveQuery&) { return CollectiveCost{100 * GBps, 1000}; };
  Platform plat = make_platform(topo, GpuResources{132, 0, 1.0, 1.0}, cost);
  Program p(8, false);
  for (int r = 0; r < 8; ++r) p.set_streams(r, {"comm0", "comm1"});
  int c0 = p.add_collective(balanced_a2a(8, 1e6));
  int c1 = p.add_collective(balanced_a2a(8, 1e6));
  for (int r = 0; r < 8; ++r) {
    p.add_collective_member(c0, r, 0, "comm", 0);
    p.add_collective_member(c1, r, 1, "comm", 0);
  }
  for (Backend backend : {Backend::ANALYTIC, Backend::SIMGRID}) {
    plat.backend = backend;
    auto res = run(plat, p);
    for (const auto& t : res.ops) EXPECT_NEAR(t.end, 94334, backend == Backend::ANALYTIC ? 0 : 1);
  }
}

namespace {
/** A two-node EP=16 step: compute, all-to-all, compute, all-reduce across nodes. */
Program two_node_program(bool symmetric) {
  Program p(16, symmetric);
  int a2a = p.add_collective(balanced_a2a(16, 3e5));
  CollectiveSpec ar;
  ar.name = "ar";
  ar.kind = CollectiveKind::ALL_REDUCE;
  for (int r = 0; r < 16; ++r) ar.group.push_back(r);
  ar.bytes = 4e6;
  int all_reduce = p.add_collective(ar);
  for (int r : p.simulated_ranks()) {
    p.set_streams(r, {"compute", "comm"});
    OpId k0 = p.add_kernel(r, 0, "attn", "attention", KernelWork{20000, 5000, 500, 1}, 4000);
    OpId d = p.add_collective_member(a2a, r, 1, "dispatch", 6000, {k0});
    p.add_kernel(r, 0, "shared", "expert", compute(15000), 4000);
    OpId e = p.add_kernel(r, 0, "experts", "expert", KernelWork{30000, 8000, 0, 1}, 4000, {d});
    p.add_collective_member(all_reduce, r, 1, "allreduce", 6000, {e});
  }
  return p;
}
}  // namespace

TEST(Collective, SymmetricFastPathEqualsFullSimulation) {
  for (int gpus_per_nic : {1, 8}) {
    Topology topo;
    topo.nodes = 2;
    topo.gpus_per_nic = gpus_per_nic;
    topo.nic_Bps = 50 * GBps;  // the NIC binds, so its sharing matters
    auto cost = [](const CollectiveQuery& q) {
      return CollectiveCost{(q.spans_nodes ? 80 : 300) * GBps, 2000};
    };
    Platform plat = make_platform(topo, GpuResources{132, 20, 1.05, 1.1}, cost);
    Program full = two_node_program(false);
    Program sym = two_node_program(true);
    auto rf = run(plat, full);
    auto rs = run(plat, sym);
    ASSERT_EQ(rs.ops.size(), 5u);
    for (std::size_t i = 0; i < rs.ops.size(); ++i) {  // rank 0's ops are the first five in both
      EXPECT_EQ(rs.ops[i].start, rf.ops[i].start) << "op " << i << " nic sharing " << gpus_per_nic;
      EXPECT_EQ(rs.ops[i].end, rf.ops[i].end) << "op " << i << " nic sharing " << gpus_per_nic;
    }
    EXPECT_EQ(rs.makespan_ns, rf.makespan_ns);
  }
}

TEST(Collective, MembersAreFoundByRankInTheGroupAndStrangersRejected) {
  // Group {6, 2, 4} of an 8-rank world: rank 4 sits at index 2, rank 3 is not in it.
  Program p(8, false);
  CollectiveSpec spec = balanced_a2a(3, 1e3);
  spec.group = {6, 2, 4};
  const int c = p.add_collective(spec);
  EXPECT_EQ(p.group_index(c, 4), 2);
  EXPECT_EQ(p.group_index(c, 6), 0);
  EXPECT_EQ(p.group_index(c, 3), -1);
  p.set_streams(3, {"compute", "comm"});
  EXPECT_THROW(p.add_collective_member(c, 3, 1, "comm", 0), moesim::ScheduleError);
}

namespace {
/** Two EP groups of 8 on two nodes (pipeline stages): each computes, exchanges all-to-all, computes. */
Program two_stage_program(Program p) {
  for (int stage = 0; stage < 2; ++stage) {
    CollectiveSpec spec = balanced_a2a(8, 3e5, 8 * stage);
    spec.name = "a2a" + std::to_string(stage);
    const int a2a = p.add_collective(spec);
    for (int r = 8 * stage; r < 8 * stage + 8; ++r) {
      if (!p.is_simulated(r)) continue;
      p.set_streams(r, {"compute", "comm"});
      OpId k = p.add_kernel(r, 0, "attn", "attention", compute(20000.0 * (stage + 1)), 4000);
      OpId d = p.add_collective_member(a2a, r, 1, "dispatch", 6000, {k});
      p.add_kernel(r, 0, "experts", "expert", compute(10000), 4000, {d});
    }
  }
  return p;
}
}  // namespace

// Stages that differ, ranks within a stage that do the same: one representative per stage gives the times
// the full simulation gives its ranks.
TEST(Collective, MirroredProgramEqualsFullSimulation) {
  std::vector<int> representative(16);
  for (int r = 0; r < 16; ++r) representative[static_cast<std::size_t>(r)] = r < 8 ? 0 : 8;
  Program mirrored = two_stage_program(Program(16, representative));
  EXPECT_EQ(mirrored.simulated_ranks(), (std::vector<int>{0, 8}));
  EXPECT_TRUE(mirrored.is_symmetric());
  EXPECT_FALSE(mirrored.is_simulated(3));
  Program full = two_stage_program(Program(16, false));
  Platform plat = test_platform(2);
  auto rm = run(plat, mirrored);
  auto rf = run(plat, full);
  auto end_of = [](const Program& p, const RunResult& r, int rank, const std::string& name) {
    for (std::size_t i = 0; i < p.ops().size(); ++i) {
      if (p.ops()[i].rank == rank && p.ops()[i].name == name) return r.ops[i].end;
    }
    return TimeNs{-1};
  };
  for (int rank : {0, 8}) {
    EXPECT_EQ(end_of(mirrored, rm, rank, "dispatch"), end_of(full, rf, rank, "dispatch")) << rank;
    EXPECT_EQ(end_of(mirrored, rm, rank, "experts"), end_of(full, rf, rank, "experts")) << rank;
  }
  EXPECT_EQ(rm.makespan_ns, rf.makespan_ns);
  representative[3] = 2;  // rank 2 is not simulated: it cannot stand for rank 3
  EXPECT_THROW(Program(16, representative), moesim::ScheduleError);
}
