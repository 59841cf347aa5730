// Cluster files: strict loading with path-aware errors, and the leaf arithmetic of each topology.
#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/Cluster.hpp"

using namespace moesim;
using namespace moesim::hw;

namespace {
std::string cluster_text(const std::string& topology, const std::string& nics_per_gpu = "1",
                         const std::string& nodes = "16") {
  return R"({"schema_version": 1, "name": "t", "nodes": )" + nodes +
         R"(, "gpus_per_node": 8, "nics_per_gpu": )" + nics_per_gpu + R"(, "nic_gbps": 400, "topology": )" +
         topology + R"(, "hop_latency_us": 0.5})";
}

std::string error_of(const std::string& text) {
  try {
    parse_cluster(text, "c.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Cluster, LeafArithmeticOfEachTopology) {
  // 400 Gb/s = 50e9 B/s. Fat tree radix 48 at 2:1: 48 * 2/3 = 32 NIC ports (4 nodes of 8 NICs), 16 up.
  auto ft =
      parse_cluster(cluster_text(R"({"type": "fat_tree", "radix": 48, "oversubscription": 2})"), "c.json");
  EXPECT_EQ(ft.topology, ClusterTopology::FAT_TREE);
  EXPECT_DOUBLE_EQ(ft.nic_Bps, 50e9);
  EXPECT_DOUBLE_EQ(ft.hop_latency_s, 0.5e-6);
  EXPECT_EQ(ft.nics_per_node(), 8);
  EXPECT_EQ(ft.nics_per_leaf(), 32);
  EXPECT_EQ(ft.leaves_per_pod(), 0);
  // Rails, radix 64 non-blocking: 32 down ports = 32 nodes per rail leaf.
  auto rail = parse_cluster(cluster_text(R"({"type": "rail_optimized", "radix": 64})"), "c.json");
  EXPECT_EQ(rail.nics_per_leaf(), 32);
  // 3 levels of radix 16, non-blocking: 8 NIC ports a leaf (1 node), 8 leaves a pod.
  auto three = parse_cluster(cluster_text(R"({"type": "fat_tree", "levels": 3, "radix": 16})"), "c.json");
  EXPECT_EQ(three.nics_per_leaf(), 8);
  EXPECT_EQ(three.leaves_per_pod(), 8);
  // Two GPUs per NIC.
  auto half = parse_cluster(cluster_text(R"({"type": "single_switch"})", "0.5"), "c.json");
  EXPECT_EQ(half.nics_per_node(), 4);
  EXPECT_EQ(half.nics_per_leaf(), 0);
}

TEST(Cluster, BadFilesNameTheJsonPointer) {
  EXPECT_EQ(error_of(cluster_text(R"({"type": "torus"})")),
            "c.json: /topology/type = \"torus\": expected single_switch, rail_optimized or fat_tree");
  EXPECT_EQ(error_of(cluster_text(R"({"type": "fat_tree", "radix": 64, "oversubscripton": 2})")),
            "c.json: /topology/oversubscripton is not a known key");
  EXPECT_EQ(error_of(cluster_text(R"({"type": "fat_tree", "radix": 64, "oversubscription": 0.5})")),
            "c.json: /topology/oversubscription = 0.5: must be >= 1");
  EXPECT_EQ(error_of(cluster_text(R"({"type": "single_switch"})", "0.3")),
            "c.json: /nics_per_gpu = 0.3: must be a whole number, or 1/k with k dividing gpus_per_node");
  EXPECT_EQ(error_of(cluster_text(R"({"type": "fat_tree", "radix": 64, "levels": 4})")),
            "c.json: /topology/levels = 4: expected 2 or 3");
  // 2 levels of radix 8: a leaf has 4 NIC ports, fewer than one node's 8 NICs.
  EXPECT_NE(error_of(cluster_text(R"({"type": "fat_tree", "radix": 8})")).find("too few for one node"),
            std::string::npos);
  // 2 levels of radix 16 non-blocking: 1 node a leaf, so 17 nodes need 17 leaves > 16 spine ports.
  EXPECT_EQ(error_of(cluster_text(R"({"type": "fat_tree", "radix": 16})", "1", "17")),
            "c.json: /topology needs 17 leaves under switches of radix 16: too many nodes for 2 levels");
  EXPECT_NE(error_of(R"({"schema_version": 2})").find("/schema_version"), std::string::npos);
}

TEST(Cluster, ShippedExamplesLoad) {
  for (const char* name : {"h100-rail-8x400", "mi325x-fat-tree-8x400", "fat-tree-2to1-8x400"}) {
    const auto c = load_cluster(std::string(MOESIM_TEST_DATA_DIR) + "/hwprofiles/clusters/" + name + ".json");
    EXPECT_EQ(c.name, name);
    EXPECT_DOUBLE_EQ(c.nic_Bps, 50e9) << name;
  }
}
