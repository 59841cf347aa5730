// The switch fabric between nodes: leaf uplinks shared by the flows that leave a leaf, rails, pods and
// the latency of the switches a message crosses. Expected times by hand (1 GB/s = 1 B/ns).
#include <gtest/gtest.h>

#include "SimFixtures.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

namespace {

/** `nodes` nodes of `gpus` GPUs, one 100 GB/s NIC per GPU, wide GPU ports, and `scale_out`. */
Platform cluster(int nodes, int gpus, ScaleOut scale_out, double bus_GBps = 1e6) {
  Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = gpus;
  topo.gpu_port_Bps = 1e4 * GBps;
  topo.gpus_per_nic = 1;
  topo.nic_Bps = 100 * GBps;
  topo.scale_out = scale_out;
  auto cost = [bus_GBps](const CollectiveQuery&) { return CollectiveCost{bus_GBps * GBps, 0}; };
  return make_platform(topo, GpuResources{132, 0, 1.0, 1.0}, cost);
}

/** A fat tree of 2 nodes per leaf whose uplink carries the leaf's NICs' bandwidth over `oversubscription`. */
ScaleOut fat_tree(int nics_per_leaf, double oversubscription, double hop_ns = 0) {
  ScaleOut s;
  s.nics_per_leaf = nics_per_leaf;
  s.leaf_uplink_Bps = nics_per_leaf * 100 * GBps / oversubscription;
  s.hop_latency_ns = hop_ns;
  return s;
}

auto end_of(const RunResult& r, OpId id) {
  return r.ops[static_cast<std::size_t>(id)].end;
}

}  // namespace

TEST(ScaleOut, TwoFlowsThroughOneOversubscribedUplinkShareIt) {
  // 4 one-GPU nodes, 2 per leaf, NICs of 100 GB/s. At 2:1 the leaf's uplink carries 2 * 100 / 2 = 100
  // GB/s: 0 -> 2 and 1 -> 3 both leave leaf 0, so each gets 50 GB/s (a quarter of the leaf's 200 GB/s of
  // NICs) and moves 1e6 B in 20000 ns. Non-blocking (1:1, 200 GB/s) each keeps its NIC's 100: 10000 ns.
  // 0 -> 1 stays inside the leaf and never touches the uplink: 10000 ns either way.
  for (double oversubscription : {2.0, 1.0}) {
    Program p(4, false);
    for (int r = 0; r < 4; ++r) p.set_streams(r, {"comm"});
    OpId a = p.add_transfer(0, 2, "a", "x", 1e6, Transport::SM_KERNEL, 0);
    OpId b = p.add_transfer(1, 3, "b", "x", 1e6, Transport::SM_KERNEL, 0);
    auto r = run(cluster(4, 1, fat_tree(2, oversubscription)), p);
    EXPECT_EQ(end_of(r, a), oversubscription == 2 ? 20000 : 10000);
    EXPECT_EQ(end_of(r, b), oversubscription == 2 ? 20000 : 10000);

    Program local(4, false);
    for (int g = 0; g < 4; ++g) local.set_streams(g, {"comm"});
    OpId c = local.add_transfer(0, 1, "c", "x", 1e6, Transport::SM_KERNEL, 0);
    OpId d = local.add_transfer(2, 3, "d", "x", 1e6, Transport::SM_KERNEL, 0);
    auto rl = run(cluster(4, 1, fat_tree(2, oversubscription)), local);
    EXPECT_EQ(end_of(rl, c), 10000);
    EXPECT_EQ(end_of(rl, d), 10000);
  }
}

TEST(ScaleOut, RailsKeepSameIndexTrafficOnOneSwitchAndChargeHopsAcross) {
  // 2 nodes of 2 GPUs on rails: NIC 0 of both nodes on rail 0's leaf, NIC 1 on rail 1's. 0 -> 2 (local
  // index 0 to 0) crosses one switch: no extra latency, 1e6 B / 100 GB/s = 10000 ns. 0 -> 3 goes rail 0's
  // leaf -> spine -> rail 1's leaf: 3 switches, 2 past the first at 500 ns: 11000 ns.
  ScaleOut rails = fat_tree(2, 1.0, 500);
  rails.rails = true;
  const Platform plat = cluster(2, 2, rails);
  EXPECT_EQ(plat.switch_hops(0, 2), 1);
  EXPECT_EQ(plat.switch_hops(0, 3), 3);
  EXPECT_EQ(plat.switch_hops(0, 1), 0);
  Program p(4, false);
  for (int r = 0; r < 4; ++r) p.set_streams(r, {"comm"});
  OpId same = p.add_transfer(0, 2, "same", "x", 1e6, Transport::SM_KERNEL, 0);
  OpId across = p.add_transfer(1, 2, "across", "x", 1e6, Transport::SM_KERNEL, 0);
  auto r = run(plat, p);
  // Both land on GPU 2's NIC (100 GB/s): 50 GB/s each while both move; `same` starts 1000 ns earlier,
  // alone it moves 1e5 B, then both at 50: `same` has 9e5 B left, 18000 ns -> ends 19000; `across` has
  // moved 9e5 B by then, its last 1e5 B alone: 1000 ns -> 20000.
  EXPECT_EQ(end_of(r, same), 19000);
  EXPECT_EQ(end_of(r, across), 20000);
}

TEST(ScaleOut, PodsOfAThreeLevelTreeAreFiveSwitchesApart) {
  // 8 one-GPU nodes, 2 per leaf, 2 leaves per pod: nodes 0-3 in pod 0, 4-7 in pod 1.
  ScaleOut s = fat_tree(2, 1.0, 300);
  s.leaves_per_pod = 2;
  s.pod_uplink_Bps = 400 * GBps;
  const Platform plat = cluster(8, 1, s);
  EXPECT_EQ(plat.switch_hops(0, 1), 1);
  EXPECT_EQ(plat.switch_hops(0, 2), 3);
  EXPECT_EQ(plat.switch_hops(0, 4), 5);
  EXPECT_EQ(plat.extra_latency_ns(0, 4), 1200);
  EXPECT_EQ(plat.group_extra_latency_ns({0, 1}), 0);
  EXPECT_EQ(plat.group_extra_latency_ns({0, 2, 3}), 600);
  EXPECT_EQ(plat.group_extra_latency_ns({1, 5}), 1200);
  EXPECT_EQ(plat.route(0, 4).source_side.size(), 3u);  // NIC, leaf uplink, pod uplink
  EXPECT_EQ(plat.route(0, 4).destination_side.size(), 3u);
}

TEST(ScaleOut, AllToAllAcrossAnOversubscribedTreeByHandAndSymmetric) {
  // 4 nodes of 4 GPUs, 2 nodes per leaf, NICs of 100 GB/s, 1e5 B to every peer, tables never binding.
  // Each rank has 12 remote peers, 8 of them behind the other leaf. Non-blocking: the 12 flows share
  // the NIC, 12e5 B / 100 GB/s = 12000 ns. At 2:1 the uplink carries 8 * 100 / 2 = 400 GB/s for the
  // leaf's 8 ranks x 8 flows = 64 flows: 6.25 GB/s each, so the 8 cross-leaf flows take 50 of the NIC
  // and the 4 same-leaf ones share the other 50; the cross-leaf flows end last at 1e5 / 6.25 = 16000 ns.
  // The symmetric run (rank 0 alone, capacities split among the ranks behind each link) agrees.
  for (double oversubscription : {1.0, 2.0}) {
    for (bool symmetric : {false, true}) {
      CollectiveSpec spec;
      spec.name = "a2a";
      spec.kind = CollectiveKind::ALL_TO_ALL;
      for (int i = 0; i < 16; ++i) spec.group.push_back(i);
      spec.pair_bytes.assign(16, std::vector<double>(16, 1e5));
      Program p(16, symmetric);
      const int c = p.add_collective(spec);
      for (int r : p.simulated_ranks()) {
        p.set_streams(r, {"comm"});
        p.add_collective_member(c, r, 0, "a2a", 0);
      }
      auto res = run(cluster(4, 4, fat_tree(8, oversubscription)), p);
      EXPECT_EQ(res.makespan_ns, oversubscription == 2 ? 16000 : 12000)
          << oversubscription << (symmetric ? " symmetric" : " full");
    }
  }
}
