#pragma once
// A small 8-GPU switch node whose collectives have round numbers, so expected times can be derived by hand.
#include "moesim/sim/Engine.hpp"

namespace moesim::sim::testing {

/** 1 GB/s = 1 byte/ns, so a byte count over a bandwidth in GB/s reads directly as nanoseconds. */
inline constexpr double GBps = 1e9;

inline Platform test_platform(int nodes = 1, double bus_GBps = 100, double step_latency_ns = 1000,
                              GpuResources gpu = {132, 0, 1.0, 1.0}) {
  Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = 8;
  topo.fabric = FabricType::SWITCH;
  topo.gpu_port_Bps = 1000 * GBps;  // wider than any collective's port, so tables bind when alone
  topo.gpus_per_nic = 1;
  topo.nic_Bps = 1000 * GBps;
  auto cost = [bus_GBps, step_latency_ns](const CollectiveQuery&) {
    return CollectiveCost{bus_GBps * GBps, step_latency_ns};
  };
  return make_platform(topo, gpu, cost);
}

inline KernelWork compute(double ns) {
  return KernelWork{ns, 0, 0, 1};
}
inline KernelWork memory(double ns) {
  return KernelWork{0, ns, 0, 1};
}

}  // namespace moesim::sim::testing
