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
}  // namespace

std::optional<sim::PowerModel> power_model(const hw::HwProfile& hw) {
  if (!hw.power.present) return std::nullopt;
  const hw::PowerSpec& p = hw.power;
  return sim::PowerModel{p.limit_w,        p.idle_w,          p.compute_w_at_peak,
                         p.hbm_j_per_byte, p.link_j_per_byte, p.speed_exponent};
}

sim::Platform make_platform(const hw::HwProfile& hw, int nodes) {
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
  auto cost = [profile](const sim::CollectiveQuery& q) {
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
    return sim::CollectiveCost{profile->busbw_Bps(kind, q.group_size, scope, std::max(q.bytes, 1.0), ce),
                               profile->step_latency_s(kind, q.group_size, scope, ce) * 1e9};
  };
  return sim::make_platform(topo, gpu, cost);
}

}  // namespace moesim::cost
