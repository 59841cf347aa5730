// Engine behaviour on hand-built programs whose timings have closed forms.
#include <gtest/gtest.h>

#include "SimFixtures.hpp"
#include "moesim/common/Error.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

TEST(Engine, KernelAloneTakesLaunchPlusFixedPlusRoofline) {
  // launch 5000 + fixed 300 + max(compute 2000, memory 1500) = 7300 ns
  Program p(1, false);
  p.set_streams(0, {"compute"});
  OpId k = p.add_kernel(0, 0, "k", "gemm", KernelWork{2000, 1500, 300, 1}, 5000);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(k)].start, 5000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(k)].end, 7300);
}

TEST(Engine, KernelsWaitForTheirLaunchAndTheirStream) {
  // Host launches three kernels at 5000 ns each; each runs 1000 ns on one stream.
  // Launch-bound: k_i starts at 5000·(i+1); the last ends at 15000 + 1000 = 16000.
  Program p(1, false);
  p.set_streams(0, {"compute"});
  for (int i = 0; i < 3; ++i) p.add_kernel(0, 0, "k", "gemm", compute(1000), 5000);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[0].start, 5000);
  EXPECT_EQ(r.ops[2].start, 15000);
  EXPECT_EQ(r.makespan_ns, 16000);
  EXPECT_EQ(r.ops[2].binding, Binding::LAUNCH);
}

TEST(Engine, StreamOrderSerializesLongKernels) {
  // 1 ns launches, 10000 ns kernels on one stream: in-order, so 1 + 10000 + 10000 = 20001.
  Program p(1, false);
  p.set_streams(0, {"compute"});
  p.add_kernel(0, 0, "a", "x", compute(10000), 1);
  OpId b = p.add_kernel(0, 0, "b", "x", compute(10000), 1);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].end, 20001);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].binding, Binding::STREAM);
}

TEST(Engine, ConcurrentComputeKernelsSplitTheSMs) {
  // Two full-GPU kernels of 10000 ns on two streams, launched at 0: each gets half the SMs, so both end at
  // 20000. A third kernel wanting only a quarter of the SMs gets its quarter (water filling): alone-time.
  Program p(1, false);
  p.set_streams(0, {"s0", "s1", "s2"});
  OpId a = p.add_kernel(0, 0, "a", "x", compute(10000), 0);
  OpId b = p.add_kernel(0, 1, "b", "x", compute(10000), 0);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(a)].end, 20000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].end, 20000);

  // Quarter kernel (demand 33 SMs) + full kernel (132): fair share 66 each, so the small one gets its 33
  // and runs at alone speed (8000 ns); the big one gets 99 SMs: 8000 ns at 99/132 = 6000 ns of work done,
  // then 4000 ns left alone: ends at 12000.
  Program q(1, false);
  q.set_streams(0, {"s0", "s1"});
  OpId small = q.add_kernel(0, 0, "small", "x", KernelWork{8000, 0, 0, 0.25}, 0);
  OpId big = q.add_kernel(0, 1, "big", "x", compute(10000), 0);
  auto rq = run(test_platform(), q);
  EXPECT_EQ(rq.ops[static_cast<std::size_t>(small)].end, 8000);
  EXPECT_EQ(rq.ops[static_cast<std::size_t>(big)].end, 12000);
}

TEST(Engine, MemoryBoundKernelsShareHbm) {
  // Two HBM-bound kernels of 4000 ns each at the same time: each gets half the bandwidth: 8000 ns.
  Program p(1, false);
  p.set_streams(0, {"s0", "s1"});
  OpId a = p.add_kernel(0, 0, "a", "x", memory(4000), 0);
  OpId b = p.add_kernel(0, 1, "b", "x", memory(4000), 0);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(a)].end, 8000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].end, 8000);
}

TEST(Engine, CrossStreamDependencyIsAnEventWait) {
  // b on stream 1 waits for a on stream 0: b starts at a's end (3000) and ends at 5000.
  Program p(1, false);
  p.set_streams(0, {"s0", "s1"});
  OpId a = p.add_kernel(0, 0, "a", "x", compute(3000), 0);
  OpId b = p.add_kernel(0, 1, "b", "x", compute(2000), 0, {a});
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].start, 3000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].end, 5000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].binding, Binding::DEPENDENCY);
}

TEST(Engine, HostSyncBlocksLaterLaunches) {
  // a runs 0..10000; a host sync waits for it, then costs 500 ns; the next launch (1000 ns) starts at
  // 10500, so c runs 11500..12500.
  Program p(1, false);
  p.set_streams(0, {"s0"});
  OpId a = p.add_kernel(0, 0, "a", "x", compute(10000), 0);
  OpId sync = p.add_host_op(0, "sync", "host", 500, {a});
  OpId c = p.add_kernel(0, 0, "c", "x", compute(1000), 1000);
  auto r = run(test_platform(), p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(sync)].end, 10500);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(c)].start, 11500);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(c)].end, 12500);
}

TEST(Engine, UnmetDependencyIsReportedNotHung) {
  // Rank 1 never joins the collective that rank 0 waits on.
  Program p(2, false);
  p.set_streams(0, {"comm"});
  p.set_streams(1, {"comm"});
  CollectiveSpec spec;
  spec.name = "ar";
  spec.kind = CollectiveKind::ALL_REDUCE;
  spec.group = {0, 1};
  spec.bytes = 1000;
  int c = p.add_collective(spec);
  p.add_collective_member(c, 0, 0, "comm", 0);
  EXPECT_THROW(run(test_platform(), p), moesim::ScheduleError);
}

TEST(Engine, DeterministicAcrossRuns) {
  Program p(2, false);
  for (int r = 0; r < 2; ++r) p.set_streams(r, {"compute", "comm"});
  CollectiveSpec spec;
  spec.name = "a2a";
  spec.kind = CollectiveKind::ALL_TO_ALL;
  spec.group = {0, 1};
  spec.pair_bytes = {{0, 123457}, {98765, 0}};
  int c = p.add_collective(spec);
  for (int r = 0; r < 2; ++r) {
    OpId k = p.add_kernel(r, 0, "k", "x", KernelWork{3333.3, 1234.5, 7, 0.7}, 2100);
    p.add_collective_member(c, r, 1, "comm", 3000, {k});
    p.add_kernel(r, 0, "k2", "x", compute(4444.4), 2100);
  }
  auto a = run(test_platform(), p);
  auto b = run(test_platform(), p);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].start, b.ops[i].start);
    EXPECT_EQ(a.ops[i].end, b.ops[i].end);
  }
}
