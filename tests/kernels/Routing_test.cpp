#include "Routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace moesim::kernels::layer {
namespace {

TEST(RoutingTest, ParsesKinds) {
  EXPECT_EQ(parse_routing("balanced").kind, RoutingKind::BALANCED);
  EXPECT_EQ(parse_routing("uniform").kind, RoutingKind::UNIFORM);
  EXPECT_DOUBLE_EQ(parse_routing("zipf:1.2").zipf_exponent, 1.2);
  EXPECT_THROW(parse_routing("zipf:"), std::invalid_argument);
  EXPECT_THROW(parse_routing("zipf:-1"), std::invalid_argument);
  EXPECT_THROW(parse_routing("zipf:1x"), std::invalid_argument);
  EXPECT_THROW(parse_routing("random"), std::invalid_argument);
}

void expect_distinct_experts_and_unit_weights(const TokenRouting& r, int top_k) {
  for (std::size_t t = 0; t < r.expert.size() / static_cast<std::size_t>(top_k); ++t) {
    std::set<int> experts(r.expert.begin() + static_cast<long>(t) * top_k,
                          r.expert.begin() + static_cast<long>(t + 1) * top_k);
    EXPECT_EQ(experts.size(), static_cast<std::size_t>(top_k));
    const float sum = std::accumulate(r.weight.begin() + static_cast<long>(t) * top_k,
                                      r.weight.begin() + static_cast<long>(t + 1) * top_k, 0.0f);
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
  }
}

// T·k = 10·3 = 30 slots over E = 8: 3 or 4 per expert; 30 mod 8 = 6 extra slots rotate by 6 per rank.
TEST(RoutingTest, BalancedSendsFloorOrCeilToEveryExpertAndRotatesTheRemainder) {
  const auto routing = route_tokens(parse_routing("balanced"), 1, 4, 10, 8, 3);
  const auto matrix = tokens_to_expert(routing, 8);
  for (int r = 0; r < 4; ++r) {
    expect_distinct_experts_and_unit_weights(routing[static_cast<std::size_t>(r)], 3);
    for (std::int64_t c : matrix[static_cast<std::size_t>(r)]) EXPECT_TRUE(c == 3 || c == 4);
    EXPECT_EQ(std::accumulate(matrix[static_cast<std::size_t>(r)].begin(),
                              matrix[static_cast<std::size_t>(r)].end(), std::int64_t{0}),
              30);
  }
  // Rank 0's extras go to experts 0..5, rank 1's to 6,7,0..3: column totals differ by at most 1 per pair of
  // ranks.
  EXPECT_EQ(matrix[0][0], 4);
  EXPECT_EQ(matrix[0][6], 3);
  EXPECT_EQ(matrix[1][6], 4);
}

TEST(RoutingTest, UniformAndZipfAreDeterministicDistinctAndZipfIsSkewed) {
  const auto a = route_tokens(parse_routing("zipf:1.2"), 7, 2, 4096, 16, 2);
  const auto b = route_tokens(parse_routing("zipf:1.2"), 7, 2, 4096, 16, 2);
  EXPECT_EQ(a[1].expert, b[1].expert);
  expect_distinct_experts_and_unit_weights(a[0], 2);
  const auto zipf = tokens_to_expert(a, 16)[0];
  const auto uniform = tokens_to_expert(route_tokens(parse_routing("uniform"), 7, 1, 4096, 16, 2), 16)[0];
  const auto max_of = [](const std::vector<std::int64_t>& v) {
    return *std::max_element(v.begin(), v.end());
  };
  // Uniform: 512 per expert on average; zipf s=1.2 puts well over twice that on the hottest expert.
  EXPECT_LT(max_of(uniform), 640);
  EXPECT_GT(max_of(zipf), 1100);
}

TEST(RoutingTest, AlltoallPlanIsConsistentAcrossRanks) {
  const auto routing = route_tokens(parse_routing("zipf:1.0"), 3, 4, 64, 8, 2);
  const auto plans = plan_alltoall(routing, 8, 2);
  const auto matrix = tokens_to_expert(routing, 8);
  for (int r = 0; r < 4; ++r) {
    const AlltoallPlan& p = plans[static_cast<std::size_t>(r)];
    for (int s = 0; s < 4; ++s)
      EXPECT_EQ(p.recv_rows[static_cast<std::size_t>(s)],
                plans[static_cast<std::size_t>(s)].send_rows[static_cast<std::size_t>(r)]);
    EXPECT_EQ(std::accumulate(p.expert_rows.begin(), p.expert_rows.end(), std::int64_t{0}), p.recv_total);
    EXPECT_EQ(p.expert_rows[1], matrix[0][static_cast<std::size_t>(2 * r + 1)] +
                                    matrix[1][static_cast<std::size_t>(2 * r + 1)] +
                                    matrix[2][static_cast<std::size_t>(2 * r + 1)] +
                                    matrix[3][static_cast<std::size_t>(2 * r + 1)]);
    // Send rows are sorted by expert, and slot_position inverts permute_source.
    for (std::size_t slot = 0; slot < p.slot_position.size(); ++slot)
      EXPECT_EQ(p.permute_source[static_cast<std::size_t>(p.slot_position[slot])],
                static_cast<int>(slot / 2));
    // regroup and ungroup are inverse permutations.
    for (std::size_t q = 0; q < p.regroup_source.size(); ++q)
      EXPECT_EQ(p.ungroup_source[static_cast<std::size_t>(p.regroup_source[q])], static_cast<int>(q));
  }
}

// Follows one row: rank 2's slot lands at the receiver in the block of rank 2 and, after the
// regroup, inside the block of its expert.
TEST(RoutingTest, AlltoallRegroupPutsEveryReceivedRowInItsExpertBlock) {
  const auto routing = route_tokens(parse_routing("uniform"), 5, 3, 32, 6, 2);
  const auto plans = plan_alltoall(routing, 6, 2);
  for (int dst = 0; dst < 3; ++dst) {
    const AlltoallPlan& p = plans[static_cast<std::size_t>(dst)];
    std::vector<int> expert_of_recv_row;
    for (int src = 0; src < 3; ++src) {
      const AlltoallPlan& s = plans[static_cast<std::size_t>(src)];
      for (std::int64_t i = 0; i < s.send_rows[static_cast<std::size_t>(dst)]; ++i) {
        const std::int64_t row = s.send_offset[static_cast<std::size_t>(dst)] + i;
        // The expert of send row `row` of src: find its slot.
        const auto slot = std::find(s.slot_position.begin(), s.slot_position.end(), static_cast<int>(row)) -
                          s.slot_position.begin();
        expert_of_recv_row.push_back(
            routing[static_cast<std::size_t>(src)].expert[static_cast<std::size_t>(slot)]);
      }
    }
    std::int64_t q = 0;
    for (std::size_t le = 0; le < p.expert_rows.size(); ++le) {
      for (std::int64_t m = 0; m < p.expert_rows[le]; ++m, ++q)
        EXPECT_EQ(expert_of_recv_row[static_cast<std::size_t>(p.regroup_source[static_cast<std::size_t>(q)])],
                  dst * 2 + static_cast<int>(le));
    }
  }
}

TEST(RoutingTest, AllreducePlanCoversEverySlotOnExactlyOneRank) {
  const auto routing = route_tokens(parse_routing("uniform"), 9, 1, 50, 8, 3)[0];
  const auto plans = plan_allreduce(routing, 8, 3, 4);
  for (std::size_t slot = 0; slot < routing.expert.size(); ++slot) {
    int owners = 0;
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const int pos = plans[r].slot_position[slot];
      if (pos < 0) continue;
      ++owners;
      EXPECT_EQ(static_cast<std::size_t>(routing.expert[slot] / 2), r);
      EXPECT_EQ(plans[r].permute_source[static_cast<std::size_t>(pos)], static_cast<int>(slot / 3));
    }
    EXPECT_EQ(owners, 1);
  }
}

}  // namespace
}  // namespace moesim::kernels::layer
