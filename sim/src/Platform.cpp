#include "moesim/sim/Platform.hpp"

#include <algorithm>

#include "moesim/sim/BackendName.hpp"

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

std::string to_string(Backend backend) {
  return backend == Backend::SIMGRID ? "simgrid" : "analytic";
}

Backend parse_backend(const std::string& name, const std::string& flag) {
  if (name == "analytic") return Backend::ANALYTIC;
  if (name == "simgrid") return Backend::SIMGRID;
  throw ConfigError("", flag, "= \"" + name + "\": expected analytic or simgrid");
}

namespace {
int add_link(std::vector<Link>& links, std::string name, double capacity, int sharers) {
  links.push_back(Link{std::move(name), capacity, sharers});
  return static_cast<int>(links.size()) - 1;
}

void require_positive(double value, const char* what) {
  if (!(value > 0)) throw ScheduleError(std::string("platform: ") + what + " must be > 0");
}

/** Leaf and pod uplinks; each is shared (in symmetric runs: split) by every rank below it. */
void add_scale_out_links(Platform& p) {
  const ScaleOut& s = p.topology.scale_out;
  if (s.nics_per_leaf <= 0) return;
  require_positive(s.leaf_uplink_Bps, "scale_out.leaf_uplink_Bps");
  if (s.leaves_per_pod > 0) require_positive(s.pod_uplink_Bps, "scale_out.pod_uplink_Bps");
  const int nics = static_cast<int>(p.nic_out.size());
  int leaves = 0;
  for (int nic = 0; nic < nics; ++nic) leaves = std::max(leaves, p.leaf_of_nic(nic) + 1);
  std::vector<int> ranks_below(static_cast<std::size_t>(leaves), 0);
  for (int nic = 0; nic < nics; ++nic)
    ranks_below[static_cast<std::size_t>(p.leaf_of_nic(nic))] += p.topology.gpus_per_nic;
  for (int l = 0; l < leaves; ++l) {
    const int sharers = ranks_below[static_cast<std::size_t>(l)];
    p.leaf_up.push_back(add_link(p.links, "leaf" + std::to_string(l) + ".up", s.leaf_uplink_Bps, sharers));
    p.leaf_down.push_back(
        add_link(p.links, "leaf" + std::to_string(l) + ".down", s.leaf_uplink_Bps, sharers));
  }
  if (s.leaves_per_pod <= 0) return;
  const int pods = (leaves + s.leaves_per_pod - 1) / s.leaves_per_pod;
  for (int pod = 0; pod < pods; ++pod) {
    int sharers = 0;
    for (int l = pod * s.leaves_per_pod; l < std::min(leaves, (pod + 1) * s.leaves_per_pod); ++l)
      sharers += ranks_below[static_cast<std::size_t>(l)];
    p.pod_up.push_back(add_link(p.links, "pod" + std::to_string(pod) + ".up", s.pod_uplink_Bps, sharers));
    p.pod_down.push_back(add_link(p.links, "pod" + std::to_string(pod) + ".down", s.pod_uplink_Bps, sharers));
  }
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
    add_scale_out_links(p);
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

int Platform::leaf_of_nic(int nic) const {
  const ScaleOut& s = topology.scale_out;
  if (s.nics_per_leaf <= 0) return -1;
  const int nics_per_node = topology.gpus_per_node / topology.gpus_per_nic;
  const int node = nic / nics_per_node;
  if (s.rails) return (node / s.nics_per_leaf) * nics_per_node + nic % nics_per_node;
  return node / std::max(1, s.nics_per_leaf / nics_per_node);
}

int Platform::switch_hops(int src, int dst) const {
  if (topology.node_of(src) == topology.node_of(dst)) return 0;
  const int a = leaf_of_nic(nic_of(src)), b = leaf_of_nic(nic_of(dst));
  if (a == b) return 1;
  const int per_pod = topology.scale_out.leaves_per_pod;
  return per_pod > 0 && a / per_pod != b / per_pod ? 5 : 3;
}

double Platform::extra_latency_ns(int src, int dst) const {
  const int hops = switch_hops(src, dst);
  return hops > 1 ? (hops - 1) * topology.scale_out.hop_latency_ns : 0.0;
}

double Platform::group_extra_latency_ns(const std::vector<int>& group) const {
  if (topology.scale_out.nics_per_leaf <= 0 || topology.scale_out.hop_latency_ns <= 0 || group.empty())
    return 0;
  // Two members on different leaves (pods) are 3 (5) switches apart; leaves of one node differ only
  // on rails, where two members of different nodes and rails are apart too.
  const int per_pod = topology.scale_out.leaves_per_pod;
  const int first_leaf = leaf_of_nic(nic_of(group.front()));
  bool leaves_differ = false, pods_differ = false;
  int other_node_leaf = -1;
  for (int r : group) {
    const int leaf = leaf_of_nic(nic_of(r));
    if (topology.node_of(r) != topology.node_of(group.front())) other_node_leaf = leaf;
    leaves_differ = leaves_differ || leaf != first_leaf;
    pods_differ = pods_differ || (per_pod > 0 && leaf / per_pod != first_leaf / per_pod);
  }
  if (other_node_leaf < 0) return 0;  // one node: no switch crossed
  const int hops = pods_differ ? 5 : leaves_differ ? 3 : 1;
  return (hops - 1) * topology.scale_out.hop_latency_ns;
}

Route Platform::route(int src, int dst, bool spread) const {
  Route r;
  if (topology.node_of(src) != topology.node_of(dst)) {
    r.source_side.push_back(nic_out.at(static_cast<std::size_t>(nic_of(src))));
    const int a = leaf_of_nic(nic_of(src)), b = leaf_of_nic(nic_of(dst));
    if (a != b) {
      const int per_pod = topology.scale_out.leaves_per_pod;
      r.source_side.push_back(leaf_up.at(static_cast<std::size_t>(a)));
      if (per_pod > 0 && a / per_pod != b / per_pod) {
        r.source_side.push_back(pod_up.at(static_cast<std::size_t>(a / per_pod)));
        r.destination_side.push_back(pod_down.at(static_cast<std::size_t>(b / per_pod)));
      }
      r.destination_side.push_back(leaf_down.at(static_cast<std::size_t>(b)));
    }
    r.destination_side.push_back(nic_in.at(static_cast<std::size_t>(nic_of(dst))));
    return r;
  }
  r.source_side.push_back(egress_port.at(static_cast<std::size_t>(src)));
  r.destination_side.push_back(ingress_port.at(static_cast<std::size_t>(dst)));
  if (topology.fabric == FabricType::MESH && !spread) r.source_side.push_back(mesh_link(src, dst));
  return r;
}

}  // namespace moesim::sim
