#pragma once
/**
 * @file Data parallelism of one pipeline rank: the gradient collectives of its weights over their
 * data-parallel groups, in buckets launched as the last micro-batch's backward completes them (Megatron's
 * overlapped gradient reduction), the optimizer step, and ZeRO-1's parameter all-gather.
 *
 *   dense weights (attention, norms, router, shared experts, dense FFN): one copy per TP rank of every EP
 *     group and replica: group = the stage's ranks with this TP index, x dp (all-reduce MoE: the replicas)
 *   routed experts: one copy per replica: group = this EP index of the stage, x dp
 *
 *   backward of the last micro-batch ─► bucket full ─► reduce-scatter (zero1) | all-reduce (adam) on dp_comm
 *   every bucket done ─► Adam (a bandwidth-bound pass over the rank's shard of weights, optimizer state)
 *   zero1: the updated shards are all-gathered at the start of the next step, each bucket before the first
 *   forward of its layers (Megatron's overlapped parameter gather), so a step starts with them
 */
#include <map>
#include <vector>

#include "ProgramBuilder.hpp"
#include "layers/Layers.hpp"

namespace moesim::schedules::detail {

class DataParallel {
 public:
  /** `parts`: the layer ranges this rank holds; `replicas`: the dp ranks its groups span (world =
   * ep·pp·replicas). */
  DataParallel(ProgramBuilder& b, std::vector<LayerRange> parts, int replicas);

  /** @brief ZeRO-1: emits every bucket's parameter all-gather, in the order the rank first runs its parts. */
  void start(const std::vector<int>& part_order);
  /** @brief Before the first forward op of `layer` in this step: waits for its bucket's all-gather. */
  void before_forward(int layer);
  /** @brief `layer`'s weight gradients are complete (last micro-batch): a full bucket's collective launches.
   */
  void gradients_ready(int layer);
  /** @brief Launches what is left, then the optimizer step after every gradient collective. */
  void finish();

 private:
  enum class Weights { DENSE, EXPERT };
  struct Bucket {
    Weights weights = Weights::DENSE;
    int part = 0;
    std::vector<int> layers;  ///< descending, the order their gradients complete
    double params = 0;
    int pending = 0;  ///< layers whose gradients are not complete yet
    OpId gather = NO_OP;
  };
  static Bucket empty_bucket(Weights weights, int part);
  double layer_params(int layer, Weights weights) const;
  std::vector<int> group(Weights weights) const;
  void launch(Bucket& bucket, int index);

  ProgramBuilder& b_;
  const Scenario& s_;
  std::vector<LayerRange> parts_;
  int replicas_;
  int stream_ = -1;
  std::vector<Bucket> buckets_;
  std::map<int, std::vector<int>> buckets_of_layer_;
  std::map<int, bool> gathered_;
  std::vector<OpId> reductions_;
};

}  // namespace moesim::schedules::detail
