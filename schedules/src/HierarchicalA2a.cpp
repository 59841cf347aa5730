#include "HierarchicalA2a.hpp"

#include <cmath>

namespace moesim::schedules::detail {

double expected_copy_factor(int experts, int top_k, int experts_on_target) {
  if (experts_on_target <= 0 || top_k <= 0 || experts <= 0) return 1.0;
  // C(E - X, k) / C(E, k) = prod_{i < k} (E - X - i) / (E - i)
  double miss = 1.0;
  for (int i = 0; i < top_k; ++i)
    miss *= std::max(0.0, static_cast<double>(experts - experts_on_target - i)) / (experts - i);
  const double copies = static_cast<double>(top_k) * experts_on_target / experts;
  return (1.0 - miss) / copies;
}

sim::CollectiveSpec hierarchical_leg(const sim::PairBytes& pairs, const HierarchicalShape& shape, HierLeg leg,
                                     int rank, bool combine) {
  const int g = shape.gpus_per_node;
  const int node = rank / g, local = rank % g;
  // Traffic as dispatch sees it: from token owner s to expert holder d.
  auto owner_to_expert = [&](int s, int d) {
    return combine ? pairs[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)]
                   : pairs[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
  };
  sim::CollectiveSpec spec;
  spec.kind = sim::CollectiveKind::ALL_TO_ALL;
  if (leg == HierLeg::RDMA) {
    // Rail `local`: owner (m, local) sends node n's share to forwarder (n, local), once per node.
    for (int m = 0; m < shape.nodes; ++m) spec.group.push_back(m * g + local);
    spec.pair_bytes.assign(static_cast<std::size_t>(shape.nodes),
                           std::vector<double>(static_cast<std::size_t>(shape.nodes), 0.0));
    for (int m = 0; m < shape.nodes; ++m) {
      for (int n = 0; n < shape.nodes; ++n) {
        if (m == n) continue;
        double bytes = 0;
        for (int d = n * g; d < (n + 1) * g; ++d) bytes += owner_to_expert(m * g + local, d);
        auto& cell = combine ? spec.pair_bytes[static_cast<std::size_t>(n)][static_cast<std::size_t>(m)]
                             : spec.pair_bytes[static_cast<std::size_t>(m)][static_cast<std::size_t>(n)];
        cell = bytes * shape.node_factor;
      }
    }
    return spec;
  }
  // Node `node`: forwarder (node, a) hands expert holder (node, b) what rail a brought in from every node,
  // its own tokens included (those go straight over NVLink).
  for (int b = 0; b < g; ++b) spec.group.push_back(node * g + b);
  spec.pair_bytes.assign(static_cast<std::size_t>(g), std::vector<double>(static_cast<std::size_t>(g), 0.0));
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      double bytes = 0;
      for (int m = 0; m < shape.nodes; ++m) bytes += owner_to_expert(m * g + a, node * g + b);
      auto& cell = combine ? spec.pair_bytes[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)]
                           : spec.pair_bytes[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      cell = bytes * shape.gpu_factor;
    }
  }
  return spec;
}

}  // namespace moesim::schedules::detail
