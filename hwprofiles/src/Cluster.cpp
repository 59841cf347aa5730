#include "moesim/hwprofiles/Cluster.hpp"

#include <cmath>

#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::hw {

namespace {

ClusterTopology parse_topology(JsonObject& t) {
  const std::string type = t.string("type");
  if (type == "single_switch") return ClusterTopology::SINGLE_SWITCH;
  if (type == "rail_optimized") return ClusterTopology::RAIL_OPTIMIZED;
  if (type == "fat_tree") return ClusterTopology::FAT_TREE;
  t.fail("type", "expected single_switch, rail_optimized or fat_tree");
}

/** Ports of a leaf facing NICs: radix · o / (o + 1), the rest face the spine. */
int leaf_down_ports(const ClusterSpec& c) {
  return static_cast<int>(std::floor(c.radix * c.oversubscription / (c.oversubscription + 1) + 1e-9));
}

/** Nodes one leaf (fat tree) or one rail leaf holds. */
int nodes_per_leaf(const ClusterSpec& c) {
  const int down = leaf_down_ports(c);
  return c.topology == ClusterTopology::RAIL_OPTIMIZED ? down : down / c.nics_per_node();
}

void check_fits(const ClusterSpec& c) {
  const std::string where = "/topology";
  auto fail = [&](const std::string& message) { throw ConfigError(c.file, where, message); };
  if (c.topology == ClusterTopology::SINGLE_SWITCH) {
    if (c.radix > 0 && c.nodes * c.nics_per_node() > c.radix)
      fail("a single switch of radix " + std::to_string(c.radix) + " cannot hold " + std::to_string(c.nodes) +
           " nodes x " + std::to_string(c.nics_per_node()) + " NICs");
    return;
  }
  if (nodes_per_leaf(c) < 1)
    fail("a leaf of radix " + std::to_string(c.radix) + " at " + nlohmann::json(c.oversubscription).dump() +
         ":1 has " + std::to_string(leaf_down_ports(c)) + " NIC ports: too few for one node's " +
         std::to_string(c.nics_per_node()) + " NICs");
  const int groups = (c.nodes + nodes_per_leaf(c) - 1) / nodes_per_leaf(c);
  const int leaves = c.topology == ClusterTopology::RAIL_OPTIMIZED ? groups * c.nics_per_node() : groups;
  // A spine switch has one port per leaf (2 levels) or per pod (3 levels: k-ary fat tree, k/2 leaves a pod).
  const int blocks = c.levels == 3 ? (leaves + c.leaves_per_pod() - 1) / c.leaves_per_pod() : leaves;
  if (blocks > c.radix)
    fail("needs " + std::to_string(blocks) + (c.levels == 3 ? " pods" : " leaves") +
         " under switches of radix " + std::to_string(c.radix) + ": too many nodes for " +
         std::to_string(c.levels) + " levels");
}

}  // namespace

std::string to_string(ClusterTopology topology) {
  switch (topology) {
    case ClusterTopology::SINGLE_SWITCH:
      return "single_switch";
    case ClusterTopology::RAIL_OPTIMIZED:
      return "rail_optimized";
    case ClusterTopology::FAT_TREE:
      return "fat_tree";
  }
  return "unknown";
}

int ClusterSpec::nics_per_node() const {
  return static_cast<int>(std::lround(nics_per_gpu * gpus_per_node));
}

int ClusterSpec::nics_per_leaf() const {
  if (topology == ClusterTopology::SINGLE_SWITCH) return 0;
  const int nodes_on_leaf = nodes_per_leaf(*this);
  return topology == ClusterTopology::RAIL_OPTIMIZED ? nodes_on_leaf : nodes_on_leaf * nics_per_node();
}

int ClusterSpec::leaves_per_pod() const {
  return topology == ClusterTopology::FAT_TREE && levels == 3 ? radix / 2 : 0;
}

ClusterSpec parse_cluster(const std::string& text, const std::string& file) {
  const auto doc = parse_json_text(text, file);
  JsonObject root(doc, file);
  ClusterSpec c;
  c.file = file;
  if (root.integer("schema_version") != 1) root.fail("schema_version", "must be 1");
  c.name = root.string("name");
  c.description = root.optional_string("description").value_or("");
  c.nodes = static_cast<int>(root.positive_integer("nodes"));
  c.gpus_per_node = static_cast<int>(root.positive_integer("gpus_per_node"));
  c.nics_per_gpu = root.positive("nics_per_gpu");
  const double per_node = c.nics_per_gpu * c.gpus_per_node;
  const bool whole = std::abs(per_node - std::round(per_node)) < 1e-9 && per_node >= 1;
  if (!whole || (c.nics_per_gpu < 1 && c.gpus_per_node % c.nics_per_node() != 0) ||
      (c.nics_per_gpu >= 1 && std::abs(c.nics_per_gpu - std::round(c.nics_per_gpu)) > 1e-9))
    root.fail("nics_per_gpu", "must be a whole number, or 1/k with k dividing gpus_per_node");
  c.nic_Bps = root.positive("nic_gbps") * 1e9 / 8;
  c.hop_latency_s = root.non_negative("hop_latency_us") * 1e-6;
  auto t = root.object("topology");
  c.topology = parse_topology(t);
  if (c.topology == ClusterTopology::SINGLE_SWITCH) {
    c.radix = static_cast<int>(t.optional_integer("radix").value_or(0));
    if (c.radix < 0) t.fail("radix", "must be >= 0");
  } else {
    c.radix = static_cast<int>(t.positive_integer("radix"));
    c.oversubscription = t.optional_number("oversubscription").value_or(1.0);
    if (!(c.oversubscription >= 1)) t.fail("oversubscription", "must be >= 1");
    if (c.topology == ClusterTopology::FAT_TREE) {
      c.levels = static_cast<int>(t.optional_integer("levels").value_or(2));
      if (c.levels != 2 && c.levels != 3) t.fail("levels", "expected 2 or 3");
    }
  }
  t.finish();
  root.finish();
  check_fits(c);
  return c;
}

ClusterSpec load_cluster(const std::string& path) {
  return parse_cluster(read_json_file(path).dump(), path);
}

}  // namespace moesim::hw
