#pragma once
/** @file The pending completion of every moving flow, earliest first, updated in place. */
#include <cstdint>
#include <tuple>

#include "IndexedHeap.hpp"
#include "moesim/sim/Types.hpp"

namespace moesim::sim::detail {

/** @brief When a flow completes; flows completing at the same time go in creation order. */
struct FlowCompletion {
  TimeNs time;
  std::uint64_t creation;
  bool operator<(const FlowCompletion& o) const {
    return std::tie(time, creation) < std::tie(o.time, o.creation);
  }
};

/**
 * @brief Completions of moving flows by flow id. A rate change moves its flow's entry instead of adding
 * another, so the heap holds one entry per moving flow.
 */
using FlowQueue = IndexedHeap<FlowCompletion>;

}  // namespace moesim::sim::detail
