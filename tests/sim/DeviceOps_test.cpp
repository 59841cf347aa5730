// Persistent kernels (POOL/TASK), one-sided transfers and jitter, on programs with closed-form timings.
#include <gtest/gtest.h>

#include <algorithm>

#include "SimFixtures.hpp"
#include "moesim/common/Error.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

namespace {
TimeNs end_of(const RunResult& r, OpId id) {
  return r.ops[static_cast<std::size_t>(id)].end;
}
TimeNs start_of(const RunResult& r, OpId id) {
  return r.ops[static_cast<std::size_t>(id)].start;
}
}  // namespace

TEST(DeviceOps, PoolRunsTasksFifoOnItsProcessors) {
  // Launch 1000 ns. 2 processors, 5 independent tasks of 300 ns: waves at 1000, 1300, 1600; the fifth
  // task (id order = FIFO order) starts at 1600 and ends at 1900, and the pool ends with it.
  Program p(1, false);
  p.set_streams(0, {"compute"});
  OpId pool = p.add_pool(0, 0, "mk", "megakernel", 3, 2, 1000);
  std::vector<OpId> tasks;
  for (int i = 0; i < 5; ++i) tasks.push_back(p.add_task(pool, "t", "gemm0", 300));
  auto r = run(test_platform(), p);
  EXPECT_EQ(start_of(r, pool), 1000);
  EXPECT_EQ(start_of(r, tasks[0]), 1000);
  EXPECT_EQ(start_of(r, tasks[2]), 1300);
  EXPECT_EQ(start_of(r, tasks[4]), 1600);
  EXPECT_EQ(end_of(r, tasks[4]), 1900);
  EXPECT_EQ(end_of(r, pool), 1900);
}

TEST(DeviceOps, TaskDependenciesChainWithoutLaunches) {
  // a (400) -> b (250) on a 4-processor pool launched at 10: b starts at 410, ends at 660. No host
  // launch between them, and the second pool processor stays free.
  Program p(1, false);
  p.set_streams(0, {"compute"});
  OpId pool = p.add_pool(0, 0, "mk", "megakernel", 5, 4, 10);
  OpId a = p.add_task(pool, "a", "x", 400);
  OpId b = p.add_task(pool, "b", "x", 250, {a});
  auto r = run(test_platform(), p);
  EXPECT_EQ(start_of(r, b), 410);
  EXPECT_EQ(end_of(r, b), 660);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(b)].binding, Binding::DEPENDENCY);
}

TEST(DeviceOps, TransferCrossesLinksAndReleasesPeerTask) {
  // Switch ports of 1000 GB/s = 1000 B/ns. Rank 0's task (500 ns, pool launched at 0) is followed by a
  // 2e6-byte transfer to rank 1 with 100 ns latency: 500 + 100 + 2000 = 2600; rank 1's task waits on it
  // and ends at 2600 + 300 = 2900.
  Program p(2, false);
  p.set_streams(0, {"compute"});
  p.set_streams(1, {"compute"});
  OpId pool0 = p.add_pool(0, 0, "mk0", "megakernel", 2, 1, 0);
  OpId pool1 = p.add_pool(1, 0, "mk1", "megakernel", 2, 1, 0);
  OpId produce = p.add_task(pool0, "produce", "x", 500);
  OpId put = p.add_transfer(0, 1, "put", "dispatch", 2e6, Transport::SM_KERNEL, 100, {produce});
  OpId consume = p.add_task(pool1, "consume", "x", 300, {put});
  auto r = run(test_platform(), p);
  EXPECT_EQ(end_of(r, put), 2600);
  EXPECT_EQ(end_of(r, consume), 2900);
  EXPECT_EQ(end_of(r, pool1), 2900);
}

TEST(DeviceOps, TwoTransfersIntoOneGpuShareItsIngress) {
  // Ranks 1 and 2 each put 1e6 bytes into rank 0 at t = 0: rank 0's 1000 B/ns ingress is shared,
  // 500 B/ns each, so both end at 2000 ns. A local put (0 -> 0) ends at once.
  Program p(3, false);
  for (int r = 0; r < 3; ++r) p.set_streams(r, {"compute"});
  OpId a = p.add_transfer(1, 0, "a", "x", 1e6, Transport::COPY_ENGINE, 0);
  OpId b = p.add_transfer(2, 0, "b", "x", 1e6, Transport::SM_KERNEL, 0);
  OpId self = p.add_transfer(0, 0, "self", "x", 1e6, Transport::SM_KERNEL, 0);
  auto r = run(test_platform(), p);
  EXPECT_EQ(end_of(r, a), 2000);
  EXPECT_EQ(end_of(r, b), 2000);
  EXPECT_EQ(end_of(r, self), 0);
}

TEST(DeviceOps, PoolHoldsItsSmsAwayFromOtherKernels) {
  // 132 SMs; the pool holds 66 while its one 10000 ns task runs. A full-GPU kernel of 10000 ns on another
  // stream gets the other 66 SMs: half speed for 10000 ns (5000 ns of work), then alone: ends at 15000.
  Program p(1, false);
  p.set_streams(0, {"s0", "s1"});
  OpId pool = p.add_pool(0, 0, "mk", "megakernel", 66, 1, 0);
  p.add_task(pool, "t", "x", 10000);
  OpId k = p.add_kernel(0, 1, "k", "x", compute(10000), 0);
  auto r = run(test_platform(), p);
  EXPECT_EQ(end_of(r, k), 15000);
}

TEST(DeviceOps, BadPoolsAndTransfersAreRejected) {
  Program p(2, true);
  p.set_streams(0, {"compute"});
  EXPECT_THROW(p.add_pool(0, 0, "mk", "x", 4, 5, 0), moesim::ScheduleError);
  EXPECT_THROW(p.add_task(0, "t", "x", 1), moesim::ScheduleError);  // no ops yet: 0 is not a pool
  EXPECT_THROW(p.add_transfer(0, 1, "put", "x", 1, Transport::SM_KERNEL, 0), moesim::ScheduleError);
}

TEST(Jitter, LogNormalDrawsHitTheirQuantilesAndRepeat) {
  // 20001 draws with median 100, p95 1000: the sample median and 95th percentile land within 5%.
  JitterSpec j{JitterScope::RANK_START, 100, 1000, 7};
  auto d = draw_delays(j, 20001);
  EXPECT_EQ(d, draw_delays(j, 20001));
  std::sort(d.begin(), d.end());
  EXPECT_NEAR(d[10000], 100, 5);
  EXPECT_NEAR(d[19001], 1000, 50);
  j.p95_ns = 50;
  EXPECT_THROW(draw_delays(j, 1), moesim::ScheduleError);
}

TEST(Jitter, RankStartAndLaunchDelaysShiftKernels) {
  // Two ranks; median = p95 = 5000 (sigma 0): each rank starts 5000 ns late. Two 10 ns kernels with 1 ns
  // launches on one stream then start at 5001 and 5011 (behind the first). With OP_LAUNCH the delay is
  // added to every launch instead: launches end at 5001 and 10002, so the kernels start there.
  Program p(2, false);
  for (int r = 0; r < 2; ++r) p.set_streams(r, {"compute"});
  OpId k0 = p.add_kernel(0, 0, "k0", "x", compute(10), 1);
  OpId k1 = p.add_kernel(0, 0, "k1", "x", compute(10), 1);
  auto late = run(test_platform(), p, JitterSpec{JitterScope::RANK_START, 5000, 5000, 1});
  EXPECT_EQ(start_of(late, k0), 5001);
  EXPECT_EQ(start_of(late, k1), 5011);
  auto slow = run(test_platform(), p, JitterSpec{JitterScope::OP_LAUNCH, 5000, 5000, 1});
  EXPECT_EQ(start_of(slow, k0), 5001);
  EXPECT_EQ(start_of(slow, k1), 10002);
  Program sym(2, true);
  sym.set_streams(0, {"compute"});
  sym.add_kernel(0, 0, "k", "x", compute(10), 1);
  EXPECT_THROW(run(test_platform(), sym, JitterSpec{JitterScope::RANK_START, 1, 1, 1}),
               moesim::ScheduleError);
}
