#pragma once
/**
 * @file The machine the engine runs a Program on: GPUs, the links between them, how collectives
 * perform alone, and how concurrent kernels interfere. Plain data plus routing; it knows nothing
 * of models or of any profile file format.
 *
 *   node 0                                   node 1
 *   GPU0 ─egress─┐                ┌─ingress─ GPU8
 *   GPU1 ─egress─┤ NVSwitch  NIC0 ═══ NIC0   ├─ ...        (switch fabric: one egress and one
 *   ...          │ or xGMI mesh  (gpus_per_nic GPUs share one NIC)   ingress port per GPU;
 *   GPU7 ─egress─┘                                          mesh: one link per GPU pair)
 */
#include <functional>
#include <string>
#include <vector>

#include "moesim/sim/Types.hpp"

namespace moesim::sim {

/** @brief What one GPU offers to the kernels that run on it. */
struct GpuResources {
  int sm_count = 132;                       ///< SMs (CUs on AMD)
  int comm_sms = 16;                        ///< SMs one SM-driven collective kernel holds while it runs
  double compute_slowdown_with_comm = 1.0;  ///< compute kernels run this much slower while comm kernels run
  /// collective bandwidth divides by this while compute runs; a kernel with its own comm_drag counts that
  /// instead, and the largest count among the running kernels applies
  double comm_slowdown_with_compute = 1.0;
  double compute_slowdown_with_copy = 1.0;  ///< compute kernels run this much slower while copy-engine
                                            ///< collectives are in flight (HBM and L2 traffic, no SMs)
  /// Streaming HBM bandwidth (bytes/s) that kernels and collective traffic share; 0 leaves collective
  /// traffic out of the HBM (kernels then share it among themselves only).
  double hbm_Bps = 0;
  double comm_hbm_bytes_per_byte = 0;  ///< HBM bytes an SM-driven collective moves per bus byte, per GPU
  double copy_hbm_bytes_per_byte = 0;  ///< the same for copy-engine transfers (read + write: 2)
  double comm_hbm_weight = 1.0;        ///< a comm kernel's SM's claim on contended HBM, per compute SM
};

/** @brief Intra-node interconnect shape. */
enum class FabricType { SWITCH, MESH };

/**
 * @brief The switch fabric between nodes (read by every engine; plain numbers on purpose).
 *
 * NICs are numbered node-major (nic = node · nics_per_node + local index). With nics_per_leaf = 0 every
 * NIC hangs off one non-blocking switch: the default when no cluster file is given, where only the
 * NICs limit. Otherwise NICs hang off leaf switches whose aggregate uplink to the spine is
 * leaf_uplink_Bps, shared by every flow that leaves the leaf (oversubscription: less than the NICs
 * below it). Leaves:
 *   - rails = false (fat tree): a node's NICs share a leaf; leaf = node / (nics_per_leaf / nics_per_node).
 *   - rails = true (rail-optimized): local NIC i of nics_per_leaf consecutive nodes share rail i's leaf;
 *     leaf = (node / nics_per_leaf) · nics_per_node + i. Same-rail traffic stays on the leaf.
 * With leaves_per_pod > 0 (3-level fat tree) leaf / leaves_per_pod is the leaf's pod, whose aggregate
 * uplink to the core is pod_uplink_Bps. A flow crosses 1 switch inside a leaf, 3 between leaves of a
 * pod (or of a 2-level tree), 5 between pods; each switch beyond the first adds hop_latency_ns (the
 * profile's measured inter-node latency already holds one switch).
 */
struct ScaleOut {
  int nics_per_leaf = 0;  ///< 0 = one non-blocking switch, no uplinks
  bool rails = false;
  double leaf_uplink_Bps = 0;  ///< one leaf's uplinks together, per direction (and as much down)
  int leaves_per_pod = 0;      ///< 0 = two levels
  double pod_uplink_Bps = 0;
  double hop_latency_ns = 0;
};

/** @brief Topology and link capacities (bytes/s, per direction). */
struct Topology {
  int nodes = 1;
  int gpus_per_node = 8;
  FabricType fabric = FabricType::SWITCH;
  double gpu_port_Bps = 450e9;  ///< SWITCH: each GPU's egress (and ingress) bandwidth into the switch
  double mesh_link_Bps = 64e9;  ///< MESH: one GPU-pair link, per direction
  int gpus_per_nic = 1;         ///< GPUs that share one NIC
  double nic_Bps = 50e9;        ///< one NIC, per direction
  ScaleOut scale_out;           ///< the fabric between the NICs
  int world_size() const { return nodes * gpus_per_node; }
  int node_of(int rank) const { return rank / gpus_per_node; }
};

/** @brief Alone-on-the-machine performance of one collective call, from measured tables. */
struct CollectiveCost {
  double bus_Bps = 0;          ///< nccl-tests bus bandwidth at this size, latency excluded
  double step_latency_ns = 0;  ///< per algorithm step
};

/** @brief What the engine asks about a collective before it starts it. */
struct CollectiveQuery {
  CollectiveKind kind;
  int group_size;
  bool spans_nodes;
  double bytes;  ///< per-rank buffer size, nccl-tests convention
  Transport transport;
};

/** @brief Looks up CollectiveCost; supplied by whoever builds the Platform from a profile. */
using CollectiveCostFn = std::function<CollectiveCost(const CollectiveQuery&)>;

/** @brief A directed link with a capacity. */
struct Link {
  std::string name;
  double capacity_Bps = 0;
  /** Ranks whose outgoing traffic crosses this link; in symmetric runs its capacity is divided by this. */
  int source_sharers = 1;
};

/** @brief The links a flow crosses, split by side so symmetric runs can keep only the source side. */
struct Route {
  std::vector<int> source_side;
  std::vector<int> destination_side;
};

/** @brief The whole machine. Build with make_platform(). */
struct Platform {
  Topology topology;
  Backend backend = Backend::ANALYTIC;  ///< what sim::run() simulates it with
  GpuResources gpu;
  CollectiveCostFn collective_cost;
  std::vector<Link> links;
  /**
   * Per world rank: the speed of its clock-bound work (compute_ns) relative to the clock the kernel
   * costs were measured at, in (0, 1]; empty = 1 everywhere. The power-cap governor (Power.hpp) sets it.
   */
  std::vector<double> compute_speed;
  double speed_of(int rank) const {
    return static_cast<std::size_t>(rank) < compute_speed.size()
               ? compute_speed[static_cast<std::size_t>(rank)]
               : 1.0;
  }
  /**
   * @brief Links from rank src to rank dst (src != dst). `spread` = the transfer is striped over all of
   * the GPU's fabric links (multi-channel rings), so on a mesh it crosses the GPU's aggregate ports
   * instead of the single pair link.
   */
  Route route(int src, int dst, bool spread = false) const;

  // Indices into links, filled by make_platform().
  std::vector<int> egress_port;   ///< per rank: into the switch, or all of its mesh links together
  std::vector<int> ingress_port;  ///< per rank
  std::vector<int> nic_out;       ///< per NIC (node-major)
  std::vector<int> nic_in;
  std::vector<int> leaf_up;  ///< per leaf (ScaleOut): its uplinks to the spine; empty without leaves
  std::vector<int> leaf_down;
  std::vector<int> pod_up;  ///< per pod of a 3-level fat tree
  std::vector<int> pod_down;
  int mesh_link(int src, int dst) const;
  int nic_of(int rank) const;
  int leaf_of_nic(int nic) const;  ///< -1 without leaves
  /** @brief Switches a packet from rank src to rank dst crosses: 0 inside a node, then 1, 3 or 5. */
  int switch_hops(int src, int dst) const;
  /** @brief Latency the fabric adds to one src → dst message beyond the profile's (hops past the first). */
  double extra_latency_ns(int src, int dst) const;
  /** @brief The largest extra_latency_ns between two members of `group`, in O(group size). */
  double group_extra_latency_ns(const std::vector<int>& group) const;

 private:
  friend Platform make_platform(const Topology&, const GpuResources&, CollectiveCostFn);
  std::vector<int> mesh_links_;  ///< node-local [src_local * gpus_per_node + dst_local] for node n offset
};

/** @brief Creates the links of `topology` and validates every capacity (> 0). */
Platform make_platform(const Topology& topology, const GpuResources& gpu, CollectiveCostFn collective_cost);

}  // namespace moesim::sim
