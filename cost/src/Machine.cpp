#include "moesim/cost/Machine.hpp"

#include <memory>

#include "moesim/common/Error.hpp"
#include "moesim/cost/CostModel.hpp"

namespace moesim::cost {

namespace {
hw::CollectiveKind to_hw(sim::CollectiveKind kind) {
  switch (kind) {
    case sim::CollectiveKind::ALL_TO_ALL:
      return hw::CollectiveKind::ALL_TO_ALL;
    case sim::CollectiveKind::ALL_REDUCE:
      return hw::CollectiveKind::ALL_REDUCE;
    case sim::CollectiveKind::ALL_GATHER:
      return hw::CollectiveKind::ALL_GATHER;
    case sim::CollectiveKind::REDUCE_SCATTER:
      return hw::CollectiveKind::REDUCE_SCATTER;
  }
  return hw::CollectiveKind::ALL_TO_ALL;
}
/** A NIC's achieved bandwidth per unit of line rate, from the profile (1 when it states no line rate). */
double nic_efficiency(const hw::HwProfile& hw) {
  return hw.network.nic_bw_Bps > 0 && hw.network.nic_usable_bw_Bps > 0
             ? hw.network.nic_usable_bw_Bps / hw.network.nic_bw_Bps
             : 1.0;
}

/** The cluster's NICs and switches over the first `nodes` nodes. */
void apply_cluster(const hw::HwProfile& hw, const hw::ClusterSpec& c, int nodes, sim::Topology& topo) {
  if (c.gpus_per_node != hw.node.gpus_per_node)
    throw ScheduleError(c.file + ": gpus_per_node " + std::to_string(c.gpus_per_node) +
                        " differs from profile '" + hw.name + "' (" + std::to_string(hw.node.gpus_per_node) +
                        " GPUs a node)");
  if (nodes > c.nodes)
    throw ScheduleError("the scenario needs " + std::to_string(nodes) + " nodes; cluster '" + c.name + "' (" +
                        c.file + ") has " + std::to_string(c.nodes));
  const double usable = c.nic_Bps * nic_efficiency(hw);
  // A GPU's several NICs act as one port; NICs shared by GPUs stay one NIC.
  topo.gpus_per_nic = c.nics_per_gpu >= 1 ? 1 : c.gpus_per_node / c.nics_per_node();
  topo.nic_Bps = c.nics_per_gpu >= 1 ? usable * c.nics_per_gpu : usable;
  const int leaf_nics = c.nics_per_leaf();
  if (leaf_nics == 0) return;
  sim::ScaleOut& s = topo.scale_out;
  const bool rails = c.topology == hw::ClusterTopology::RAIL_OPTIMIZED;
  const int platform_nics_per_node = c.gpus_per_node / topo.gpus_per_nic;
  s.rails = rails;
  s.nics_per_leaf = rails ? leaf_nics : leaf_nics / c.nics_per_node() * platform_nics_per_node;
  s.leaf_uplink_Bps = leaf_nics * usable / c.oversubscription;
  s.leaves_per_pod = c.leaves_per_pod();
  s.pod_uplink_Bps = s.leaves_per_pod * s.leaf_uplink_Bps;
  s.hop_latency_ns = c.hop_latency_s * 1e9;
}
}  // namespace

double inter_node_bandwidth_ratio(const hw::HwProfile& hw, const hw::ClusterSpec& cluster) {
  const double profile_per_gpu = hw.network_bw_per_gpu_Bps();
  const double cluster_per_gpu = cluster.nics_per_gpu * cluster.nic_Bps * nic_efficiency(hw);
  return profile_per_gpu > 0 ? cluster_per_gpu / profile_per_gpu : 1.0;
}

std::optional<sim::PowerModel> power_model(const hw::HwProfile& hw) {
  if (!hw.power.present) return std::nullopt;
  const hw::PowerSpec& p = hw.power;
  return sim::PowerModel{p.limit_w,        p.idle_w,          p.compute_w_at_peak,
                         p.hbm_j_per_byte, p.link_j_per_byte, p.speed_exponent};
}

sim::Platform make_platform(const hw::HwProfile& hw, int nodes, const hw::ClusterSpec* cluster) {
  sim::Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = hw.node.gpus_per_node;
  const auto& fabric = hw.node.fabric;
  topo.fabric = fabric.type == hw::FabricType::MESH ? sim::FabricType::MESH : sim::FabricType::SWITCH;
  topo.gpu_port_Bps = fabric.usable_link_bw_Bps * fabric.links_per_gpu;
  topo.mesh_link_Bps = fabric.usable_link_bw_Bps;
  if (nodes > 1) {
    if (hw.network.nics_per_node < 1)
      throw ScheduleError("profile '" + hw.name + "' has no NICs: use --nodes 1");
    topo.gpus_per_nic = std::max(1, hw.node.gpus_per_node / hw.network.nics_per_node);
    topo.nic_Bps = hw.network.nic_usable_bw_Bps;
  }
  if (cluster) apply_cluster(hw, *cluster, nodes, topo);
  const double inter_scale = cluster ? inter_node_bandwidth_ratio(hw, *cluster) : 1.0;
  sim::GpuResources gpu;
  gpu.sm_count = hw.gpu.sm_count;
  gpu.comm_sms = hw.contention.comm_sms;
  gpu.compute_slowdown_with_comm = hw.contention.compute_slowdown_with_comm;
  gpu.comm_slowdown_with_compute = hw.contention.comm_slowdown_with_compute;
  gpu.hbm_Bps = streaming_hbm_Bps(hw);
  gpu.comm_hbm_bytes_per_byte = hw.contention.hbm_bytes_per_comm_byte;
  gpu.copy_hbm_bytes_per_byte = hw.contention.hbm_bytes_per_copy_byte;
  gpu.comm_hbm_weight = hw.contention.comm_hbm_weight;
  gpu.compute_slowdown_with_copy = hw.contention.compute_slowdown_with_copy;
  auto profile = std::make_shared<const hw::HwProfile>(hw);
  auto cost = [profile, inter_scale](const sim::CollectiveQuery& q) {
    auto scope = q.spans_nodes ? hw::CollectiveScope::INTER : hw::CollectiveScope::INTRA;
    auto kind = to_hw(q.kind);
    const bool ce = q.transport == sim::Transport::COPY_ENGINE;
    // A ring reduce-scatter or all-gather with no table of its own (inter-node ones are rarely measured) runs
    // at the ring all-reduce's bus bandwidth and step latency: nccl-tests' busbw is defined so that every
    // ring step of the three moves the same bytes over each link.
    const bool half_ring =
        q.kind == sim::CollectiveKind::REDUCE_SCATTER || q.kind == sim::CollectiveKind::ALL_GATHER;
    if (half_ring && !profile->has_collective(kind, scope, ce)) kind = hw::CollectiveKind::ALL_REDUCE;
    if (!profile->has_collective(kind, scope, ce)) {
      throw ScheduleError("profile '" + profile->name + "' has no " + (ce ? "copy-engine " : "") +
                          hw::to_string(kind) + " table for " + hw::to_string(scope) + "-node groups");
    }
    const double bus = profile->busbw_Bps(kind, q.group_size, scope, std::max(q.bytes, 1.0), ce);
    return sim::CollectiveCost{q.spans_nodes ? bus * inter_scale : bus,
                               profile->step_latency_s(kind, q.group_size, scope, ce) * 1e9};
  };
  return sim::make_platform(topo, gpu, cost);
}

}  // namespace moesim::cost
