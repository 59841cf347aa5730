// DeepEP-style hierarchical all-to-all: the byte matrices of its two legs by hand, the expected-copy
// factor against closed forms, and the option's effect on whole scenarios.
#include <gtest/gtest.h>

#include "HierarchicalA2a.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;
using namespace moesim::schedules::detail;

TEST(HierarchicalA2a, ExpectedCopyFactor) {
  // A target holding every expert gets one copy per token instead of k: 1/k.
  EXPECT_DOUBLE_EQ(expected_copy_factor(256, 8, 256), 1.0 / 8);
  // Top-1: a token hits a target with probability X/E and sends X/E copies there on average: 1.
  EXPECT_NEAR(expected_copy_factor(64, 1, 8), 1.0, 1e-12);
  // DeepSeek-V3 over 8 nodes (32 of 256 experts a node, top-8): 1 - C(224,8)/C(256,8) = 0.66183
  // (math.comb), over 8 * 32 / 256 = 1 copy.
  EXPECT_NEAR(expected_copy_factor(256, 8, 32), 0.6618315, 1e-6);
}

TEST(HierarchicalA2a, LegsByHand) {
  // 2 nodes x 2 GPUs, pairs[s][d] = 10 s + d + 1 (owner s to expert holder d), no dedup.
  sim::PairBytes pairs(4, std::vector<double>(4));
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) pairs[s][d] = 10 * s + d + 1;
  HierarchicalShape shape{2, 2, 1.0, 1.0};
  // RDMA leg of rank 1 = rail 1 = {1, 3}: owner 1 sends node 1's share (to 2 and 3) to 3: 13 + 14 = 27;
  // owner 3 sends node 0's share to 1: 31 + 32 = 63.
  auto rdma = hierarchical_leg(pairs, shape, HierLeg::RDMA, 1, false);
  EXPECT_EQ(rdma.group, (std::vector<int>{1, 3}));
  EXPECT_EQ(rdma.pair_bytes, (sim::PairBytes{{0, 27}, {63, 0}}));
  // NVLink leg of rank 2 = node 1 = {2, 3}: forwarder 2 (rail 0) hands 3 what owners 0 and 2 route to 3:
  // 4 + 24 = 28; forwarder 3 hands 2 what owners 1 and 3 route to 2: 13 + 33 = 46.
  auto nvl = hierarchical_leg(pairs, shape, HierLeg::NVLINK, 2, false);
  EXPECT_EQ(nvl.group, (std::vector<int>{2, 3}));
  EXPECT_EQ(nvl.pair_bytes, (sim::PairBytes{{0, 28}, {46, 0}}));
  // Combine of the same traffic ([expert][owner] = transpose) runs every leg backwards.
  sim::PairBytes back(4, std::vector<double>(4));
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) back[d][s] = pairs[s][d];
  EXPECT_EQ(hierarchical_leg(back, shape, HierLeg::RDMA, 1, true).pair_bytes,
            (sim::PairBytes{{0, 63}, {27, 0}}));
  EXPECT_EQ(hierarchical_leg(back, shape, HierLeg::NVLINK, 2, true).pair_bytes,
            (sim::PairBytes{{0, 46}, {28, 0}}));
  // A node factor of 0.5 halves the RDMA leg only.
  shape.node_factor = 0.5;
  EXPECT_EQ(hierarchical_leg(pairs, shape, HierLeg::RDMA, 1, false).pair_bytes,
            (sim::PairBytes{{0, 13.5}, {31.5, 0}}));
  EXPECT_EQ(hierarchical_leg(pairs, shape, HierLeg::NVLINK, 2, false).pair_bytes, nvl.pair_bytes);
}

namespace {
Scenario dsv3(int ep, const std::string& a2a) {
  Scenario s;
  s.model = models::load_model("deepseek-v3");
  s.hw = hw::load_profile("h100");
  s.schedule = "regular";
  s.parallel.ep = ep;
  s.workload.phase = Phase::TRAIN;
  s.workload.tokens = 4096;
  s.workload.seq_len = 4096;
  s.workload.layers = 4;  // 3 dense + 1 MoE
  if (!a2a.empty()) s.options["a2a"] = a2a;
  return s;
}
}  // namespace

TEST(HierarchicalA2a, FlatIsTheDefaultAndOneNodeSendsATokenOncePerGpu) {
  EXPECT_EQ(simulate(dsv3(16, "flat")).run.makespan_ns, simulate(dsv3(16, "")).run.makespan_ns);
  // One node: the NVLink leg alone, 0.66 of flat's bytes (8 of 256 experts on a GPU, top-8), so faster.
  EXPECT_LT(simulate(dsv3(8, "hierarchical")).run.makespan_ns, simulate(dsv3(8, "")).run.makespan_ns);
}

TEST(HierarchicalA2a, AcrossNodesSymmetricEqualsPerRank) {
  // Each rank simulates its own rail and node legs; rank 0's alone must time the same.
  Scenario s = dsv3(16, "hierarchical");
  const auto symmetric = simulate(s);
  s.per_rank = true;
  const auto full = simulate(s);
  EXPECT_TRUE(symmetric.symmetric);
  EXPECT_EQ(symmetric.run.makespan_ns, full.run.makespan_ns);
  EXPECT_NE(symmetric.run.makespan_ns, simulate(dsv3(16, "")).run.makespan_ns);
}

TEST(HierarchicalA2a, BadOptions) {
  Scenario s = dsv3(16, "ring");
  EXPECT_THROW(simulate(s), ConfigError);
  s = dsv3(16, "hierarchical");
  s.options["a2a_sms"] = "132";  // H100 has 132 SMs: at most 131
  EXPECT_THROW(simulate(s), ConfigError);
}
