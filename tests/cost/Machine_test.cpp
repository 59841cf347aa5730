// A cluster file turned into the engine's machine: NICs at the profile's achieved fraction of line rate,
// leaf uplinks at the leaf's NICs over the oversubscription, inter-node tables scaled by NIC bandwidth.
#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"
#include "moesim/cost/Machine.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

using namespace moesim;

namespace {
hw::ClusterSpec two_to_one(double nic_gbps = 400) {
  return hw::parse_cluster(R"({"schema_version": 1, "name": "t", "nodes": 16, "gpus_per_node": 8,
      "nics_per_gpu": 1, "nic_gbps": )" +
                               std::to_string(nic_gbps) +
                               R"(, "topology": {"type": "fat_tree", "radix": 48, "oversubscription": 2},
      "hop_latency_us": 0.5})",
                           "t.json");
}
}  // namespace

TEST(Machine, ClusterLeavesAndUplinks) {
  // h100: 400 Gb/s NICs achieving 48.5 GB/s (of 50). Radix 48 at 2:1: 32 NICs (4 nodes) a leaf, uplink
  // 32 * 48.5 / 2 = 776 GB/s shared by the leaf's 32 ranks. 8 nodes = 2 leaves; 4 links (up and down).
  const auto h100 = hw::load_profile("h100");
  const auto cluster = two_to_one();
  const auto p = cost::make_platform(h100, 8, &cluster);
  EXPECT_DOUBLE_EQ(p.topology.nic_Bps, 48.5e9);
  ASSERT_EQ(p.leaf_up.size(), 2u);
  const auto& up = p.links[static_cast<std::size_t>(p.leaf_up[0])];
  EXPECT_DOUBLE_EQ(up.capacity_Bps, 776e9);
  EXPECT_EQ(up.source_sharers, 32);
  EXPECT_EQ(p.switch_hops(0, 31), 1);  // nodes 0 and 3: one leaf
  EXPECT_EQ(p.switch_hops(0, 32), 3);  // node 4: the next leaf
  EXPECT_DOUBLE_EQ(p.extra_latency_ns(0, 32), 1000);
  // Same NICs as the profile: inter-node tables unchanged; 200 Gb/s NICs halve them.
  EXPECT_DOUBLE_EQ(cost::inter_node_bandwidth_ratio(h100, cluster), 1.0);
  EXPECT_DOUBLE_EQ(cost::inter_node_bandwidth_ratio(h100, two_to_one(200)), 0.5);
  // Without a cluster: one switch, no uplinks, as before.
  EXPECT_TRUE(cost::make_platform(h100, 8).leaf_up.empty());
  EXPECT_THROW(cost::make_platform(h100, 17, &cluster), ScheduleError);
}
