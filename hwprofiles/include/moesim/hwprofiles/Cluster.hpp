#pragma once
/**
 * @file A cluster file (`--cluster FILE`): how many nodes, their NICs and the switch fabric between
 * them. The node itself (GPUs, NVLink/xGMI) stays in the hardware profile. Format: hwprofiles/FORMAT.md,
 * "Cluster files". Values are SI after loading (bytes/s, seconds).
 */
#include <string>

namespace moesim::hw {

enum class ClusterTopology {
  SINGLE_SWITCH,   ///< every NIC on one non-blocking switch
  RAIL_OPTIMIZED,  ///< NIC i of every node on rail i's leaf switch; rails meet at a spine
  FAT_TREE,        ///< a node's NICs on one leaf; leaves (and at 3 levels, pods) meet through spines
};

struct ClusterSpec {
  std::string file;
  std::string name;
  std::string description;
  int nodes = 1;
  int gpus_per_node = 8;
  double nics_per_gpu = 1;  ///< 0.5 = two GPUs share a NIC; 2 = two NICs per GPU
  double nic_Bps = 50e9;    ///< line rate of one NIC, per direction
  ClusterTopology topology = ClusterTopology::SINGLE_SWITCH;
  int levels = 2;               ///< FAT_TREE: 2 (leaf-spine) or 3 (leaf, aggregation, core)
  int radix = 0;                ///< ports per switch; 0 = unbounded (SINGLE_SWITCH only)
  double oversubscription = 1;  ///< leaf down:up bandwidth ratio (>= 1; 2 = "2:1")
  double hop_latency_s = 0;     ///< per switch a packet crosses beyond the first

  /** @brief NICs per node (nics_per_gpu · gpus_per_node). */
  int nics_per_node() const;
  /** @brief NICs whose ports hang off one leaf switch; 0 for SINGLE_SWITCH. */
  int nics_per_leaf() const;
  /** @brief Leaves under one aggregation block of a 3-level fat tree; 0 otherwise. */
  int leaves_per_pod() const;
};

/** @brief Reads and checks a cluster file; ConfigError naming the file and JSON pointer on any problem. */
ClusterSpec load_cluster(const std::string& path);
/** @brief The same from text (tests); `file` names it in errors. */
ClusterSpec parse_cluster(const std::string& text, const std::string& file);

std::string to_string(ClusterTopology topology);

}  // namespace moesim::hw
