#pragma once
/**
 * @file What a pipeline needs from a layer schedule: one micro-batch's forward or backward over a contiguous
 * range of layers (a chunk), emitted on one rank, and optionally a forward and a backward chunk interleaved
 * sub-block by sub-block so each hides the other's all-to-alls (DualPipe's overlapped pair, Megatron's EP
 * all-to-all overlap).
 */
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ProgramBuilder.hpp"
#include "layers/Layers.hpp"
#include "moesim/common/Check.hpp"

namespace moesim::schedules::detail {

/** @brief One micro-batch's pass over a model part. */
struct Chunk {
  LayerRange layers;
  bool backward = false;
};

/** @brief A chunk as one half of an interleaved pair: its micro-batch, name tag and the ops its input waits
 * for. */
struct ChunkCall {
  Chunk chunk;
  int micro_batch = 0;
  std::string tag;
  std::vector<OpId> entry;
};

/** @brief What each chunk of a pair produced (ProgramBuilder::take_outputs() of each). */
using PairOutputs = std::pair<std::vector<OpId>, std::vector<OpId>>;

/** @brief A layer schedule as chunks; the step builder owns the order, the ranks and the transfers. */
class ChunkEmitter {
 public:
  /** `scenario`: what one chunk runs (two-batch overlap: half the tokens of the step's micro-batch). */
  ChunkEmitter(Scenario scenario, TrafficPlan traffic, sim::Transport transport, AllToAllAlgorithm all_to_all)
      : scenario_(std::move(scenario)),
        traffic_(std::move(traffic)),
        transport_(transport),
        all_to_all_(all_to_all) {}
  virtual ~ChunkEmitter() = default;
  ChunkEmitter(const ChunkEmitter&) = delete;
  ChunkEmitter& operator=(const ChunkEmitter&) = delete;

  /** @brief The scenario the chunks' ProgramBuilder sizes ops by. */
  const Scenario& scenario() const { return scenario_; }
  /** @brief The traffic every chunk's collectives carry (the builder's ProgramBuilder shares it). */
  const TrafficPlan& traffic() const { return traffic_; }
  sim::Transport transport() const { return transport_; }
  /** @brief How the chunks' Dispatch and Combine run (options a2a, a2a_sms). */
  AllToAllAlgorithm all_to_all() const { return all_to_all_; }
  /**
   * @brief Emits `chunk` on b's current rank under b's current micro-batch tag; its first kernel also waits
   * for b's pending waits (the received activations or gradients).
   */
  virtual void emit(ProgramBuilder& b, const Chunk& chunk, const LayerHooks& hooks) const = 0;
  /** @brief Whether emit_pair() is available. */
  virtual bool pairs() const { return false; }
  /**
   * @brief A forward chunk and a backward chunk interleaved so each one's compute runs under the other's
   * communication; InternalError when pairs() is false.
   */
  virtual PairOutputs emit_pair(ProgramBuilder& /*b*/, const ChunkCall& /*forward*/,
                                const ChunkCall& /*backward*/, const LayerHooks& /*hooks*/) const {
    MOE_CHECK(false) << "this layer schedule does not interleave chunk pairs";
    return {};
  }

 private:
  Scenario scenario_;
  TrafficPlan traffic_;
  sim::Transport transport_;
  AllToAllAlgorithm all_to_all_;
};

}  // namespace moesim::schedules::detail
