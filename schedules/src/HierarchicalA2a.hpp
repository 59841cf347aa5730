#pragma once
/**
 * @file DeepEP-style hierarchical all-to-all across nodes (DeepSeek-V3 report §3.2.2, DeepEP's normal
 * kernels). Dispatch: a token goes over RDMA once per destination node, to the GPU with the sender's own
 * local index there, which forwards it over NVLink to the GPUs that host its experts; combine is the
 * reverse (NVLink to the forwarder, which reduces per node, then RDMA home). DeepEP pipelines the two
 * legs through its channels, so both run at once here: one collective per rail (same local index on
 * every node: the RDMA leg) and one per node (the NVLink leg), each holding half the kernel's SMs
 * (DeepEP's even SMs forward, odd ones send and receive).
 *
 * Inside one node only the NVLink leg runs (DeepEP's intranode kernels). Bytes: the flat byte matrix counts
 * one copy per routed expert. The RDMA leg sends a token once per node it reaches and the NVLink leg once per
 * GPU; with experts drawn without regard to placement the expected copies shrink by hit(X) / (k X / E) for a
 * node (GPU) holding X of the E experts, hit(X) = 1 - C(E - X, k) / C(E, k) (expected_copy_factor).
 */
#include <memory>
#include <vector>

#include "moesim/sim/Program.hpp"

namespace moesim::schedules::detail {

/** @brief Expected distinct-target copies over per-expert copies: hit(X) / (k X / E). */
double expected_copy_factor(int experts, int top_k, int experts_on_target);

/** @brief Which leg of a hierarchical dispatch or combine. */
enum class HierLeg { RDMA, NVLINK };

struct HierarchicalShape {
  int gpus_per_node = 8;
  int nodes = 1;
  double node_factor = 1;  ///< expected_copy_factor for a node's experts
  double gpu_factor = 1;   ///< ... for one GPU's experts
};

/**
 * @brief The leg `leg` of a hierarchical all-to-all of `pairs` ([src][dst] over the EP group, one copy per
 * expert) that involves `rank`: its rail group (RDMA) or its node group (NVLink). `combine` = the pairs flow
 * from experts back to token owners (the forwarder sits on the owner's rail).
 */
sim::CollectiveSpec hierarchical_leg(const sim::PairBytes& pairs, const HierarchicalShape& shape, HierLeg leg,
                                     int rank, bool combine);

}  // namespace moesim::schedules::detail
