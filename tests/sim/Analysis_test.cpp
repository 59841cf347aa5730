#include "moesim/sim/Analysis.hpp"

#include <gtest/gtest.h>

#include "SimFixtures.hpp"
#include "moesim/common/Error.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

TEST(Analysis, ExposedCommAndOverlapFromIntervals) {
  // 2 ranks. Compute 0..40000 on stream 0; all-to-all (1e6 B per off-diagonal pair, 100 B/ns, α 1000)
  // starts at 0 on stream 1 and ends at 1000 + 1e6/100 = 11000, fully under compute → exposed 0, overlap
  // 100%. Then a second all-to-all after the compute: 40000..51000, fully exposed. comm 22000, exposed 11000
  // → overlap 50%.
  Program p(2, false);
  CollectiveSpec s;
  s.name = "a2a";
  s.kind = CollectiveKind::ALL_TO_ALL;
  s.group = {0, 1};
  s.pair_bytes = {{0, 1e6}, {1e6, 0}};
  int c0 = p.add_collective(s);
  int c1 = p.add_collective(s);
  for (int r = 0; r < 2; ++r) {
    p.set_streams(r, {"compute", "comm"});
    OpId k = p.add_kernel(r, 0, "gemm", "expert", compute(40000), 0);
    p.add_collective_member(c0, r, 1, "dispatch", 0);
    p.add_collective_member(c1, r, 1, "combine", 0, {k});
  }
  auto res = run(test_platform(), p);
  auto a = analyze(p, res);
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_EQ(a.ranks[0].compute_busy_ns, 40000);
  EXPECT_EQ(a.ranks[0].comm_busy_ns, 22000);
  EXPECT_EQ(a.ranks[0].exposed_comm_ns, 11000);
  EXPECT_DOUBLE_EQ(a.ranks[0].overlap_pct, 50.0);
  EXPECT_EQ(a.ranks[0].idle_ns, 0);
  // Critical path: gemm (40000) then combine (11000) tile the 51000 ns.
  EXPECT_EQ(a.critical_path_by_category["expert"], 40000);
  EXPECT_EQ(a.critical_path_by_category["combine"], 11000);
}

TEST(Analysis, CriticalPathFollowsLaunchesWhenLaunchBound) {
  // 4 kernels of 100 ns, 5000 ns launches: the path is four launches then the last kernel.
  Program p(1, false);
  p.set_streams(0, {"s"});
  for (int i = 0; i < 4; ++i) p.add_kernel(0, 0, "k", "tiny", compute(100), 5000);
  auto res = run(test_platform(), p);
  auto a = analyze(p, res);
  EXPECT_EQ(a.critical_path_by_category["launch"], 20000);
  EXPECT_EQ(a.critical_path_by_category["tiny"], 100);
}

TEST(Analysis, CycleIsRejected) {
  Program p(1, false);
  p.set_streams(0, {"s0", "s1"});
  OpId a = p.add_kernel(0, 0, "a", "x", compute(1), 0);
  OpId b = p.add_kernel(0, 1, "b", "x", compute(1), 0, {a});
  p.add_dependency(a, b);
  EXPECT_THROW(check_acyclic(p), moesim::ScheduleError);
}
