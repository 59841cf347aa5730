#include "moesim/sim/Platform.hpp"
#include <algorithm>

#include "moesim/common/Error.hpp"

namespace moesim::sim {

std::string to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::ALL_TO_ALL:
      return "all_to_all";
    case CollectiveKind::ALL_REDUCE:
      return "all_reduce";
    case CollectiveKind::ALL_GATHER:
      return "all_gather";
    case CollectiveKind::REDUCE_SCATTER:
      return "reduce_scatter";
  }
  return "unknown";
}

namespace {
int add_link(std::vector<Link>& links, std::string name, double capacity, int sharers) {
  links.push_back(Link{std::move(name), capacity, sharers});
  return static_cast<int>(links.size()) - 1;
}

void require_positive(double value, const char* what) {
  if (!(value > 0)) throw ScheduleError(std::string("platform: ") + what + " must be > 0");
}
}  // namespace

Platform make_platform(const Topology& topology, const GpuResources& gpu, CollectiveCostFn collective_cost) {
  if (topology.nodes < 1 || topology.gpus_per_node < 1) {
    throw ScheduleError("platform: nodes and gpus_per_node must be >= 1");
  }
  if (gpu.sm_count < 1 || gpu.comm_sms < 0 || gpu.comm_sms >= gpu.sm_count) {
    throw ScheduleError("platform: need 0 <= comm_sms < sm_count");
  }
  if (!collective_cost) throw ScheduleError("platform: no collective cost function");
  Platform p;
  p.topology = topology;
  p.gpu = gpu;
  p.collective_cost = std::move(collective_cost);
  const int world = topology.world_size();
  const int g = topology.gpus_per_node;
  if (topology.fabric == FabricType::SWITCH) {
    require_positive(topology.gpu_port_Bps, "gpu_port_Bps");
    for (int r = 0; r < world; ++r) {
      p.egress_port.push_back(
          add_link(p.links, "gpu" + std::to_string(r) + ".out", topology.gpu_port_Bps, 1));
      p.ingress_port.push_back(
          add_link(p.links, "gpu" + std::to_string(r) + ".in", topology.gpu_port_Bps, 1));
    }
  } else {
    require_positive(topology.mesh_link_Bps, "mesh_link_Bps");
    const double aggregate = topology.mesh_link_Bps * std::max(1, g - 1);
    for (int r = 0; r < world; ++r) {
      p.egress_port.push_back(add_link(p.links, "gpu" + std::to_string(r) + ".out", aggregate, 1));
      p.ingress_port.push_back(add_link(p.links, "gpu" + std::to_string(r) + ".in", aggregate, 1));
    }
    p.mesh_links_.assign(static_cast<std::size_t>(topology.nodes * g * g), -1);
    for (int n = 0; n < topology.nodes; ++n) {
      for (int a = 0; a < g; ++a) {
        for (int b = 0; b < g; ++b) {
          if (a == b) continue;
          int src = n * g + a, dst = n * g + b;
          p.mesh_links_[static_cast<std::size_t>(n * g * g + a * g + b)] = add_link(
              p.links, "xgmi" + std::to_string(src) + "-" + std::to_string(dst), topology.mesh_link_Bps, 1);
        }
      }
    }
  }
  if (topology.nodes > 1) {
    require_positive(topology.nic_Bps, "nic_Bps");
    if (topology.gpus_per_nic < 1 || g % topology.gpus_per_nic != 0) {
      throw ScheduleError("platform: gpus_per_nic must divide gpus_per_node");
    }
    const int nics = world / topology.gpus_per_nic;
    for (int i = 0; i < nics; ++i) {
      p.nic_out.push_back(
          add_link(p.links, "nic" + std::to_string(i) + ".out", topology.nic_Bps, topology.gpus_per_nic));
      p.nic_in.push_back(
          add_link(p.links, "nic" + std::to_string(i) + ".in", topology.nic_Bps, topology.gpus_per_nic));
    }
  }
  return p;
}

int Platform::mesh_link(int src, int dst) const {
  const int g = topology.gpus_per_node;
  const int n = topology.node_of(src);
  return mesh_links_.at(static_cast<std::size_t>(n * g * g + (src % g) * g + (dst % g)));
}

int Platform::nic_of(int rank) const {
  return rank / topology.gpus_per_nic;
}

Route Platform::route(int src, int dst, bool spread) const {
  Route r;
  if (topology.node_of(src) != topology.node_of(dst)) {
    r.source_side.push_back(nic_out.at(static_cast<std::size_t>(nic_of(src))));
    r.destination_side.push_back(nic_in.at(static_cast<std::size_t>(nic_of(dst))));
    return r;
  }
  r.source_side.push_back(egress_port.at(static_cast<std::size_t>(src)));
  r.destination_side.push_back(ingress_port.at(static_cast<std::size_t>(dst)));
  if (topology.fabric == FabricType::MESH && !spread) r.source_side.push_back(mesh_link(src, dst));
  return r;
}

}  // namespace moesim::sim
