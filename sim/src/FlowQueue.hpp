#pragma once
/** @file The pending completion of every moving flow, earliest first, updated in place. */
#include <cstdint>
#include <tuple>
#include <vector>

#include "moesim/sim/Types.hpp"

namespace moesim::sim::detail {

/**
 * @brief An indexed binary min-heap of flow completions keyed by (time, creation). A rate change
 * moves its flow's entry instead of adding another, so the heap holds one entry per moving flow.
 */
class FlowQueue {
 public:
  struct Entry {
    TimeNs time;
    std::uint64_t creation;
    int flow;
    bool operator<(const Entry& o) const { return std::tie(time, creation) < std::tie(o.time, o.creation); }
  };

  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.front(); }

  /** @brief Schedules (or moves) `flow`'s completion. */
  void set(int flow, TimeNs time, std::uint64_t creation) {
    const auto f = static_cast<std::size_t>(flow);
    if (f >= position_.size()) position_.resize(f + 1, kAbsent);
    if (position_[f] == kAbsent) {
      position_[f] = heap_.size();
      heap_.push_back(Entry{time, creation, flow});
      up(heap_.size() - 1);
      return;
    }
    const std::size_t at = position_[f];
    const Entry old = heap_[at];
    heap_[at] = Entry{time, creation, flow};
    if (heap_[at] < old) {
      up(at);
    } else {
      down(at);
    }
  }

  /** @brief Drops `flow`'s completion, if it has one. */
  void erase(int flow) {
    const auto f = static_cast<std::size_t>(flow);
    if (f >= position_.size() || position_[f] == kAbsent) return;
    const std::size_t at = position_[f];
    position_[f] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;
    heap_[at] = last;
    position_[static_cast<std::size_t>(last.flow)] = at;
    up(at);
    down(position_[static_cast<std::size_t>(last.flow)]);
  }

  void pop() { erase(heap_.front().flow); }

 private:
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  void place(std::size_t at, const Entry& e) {
    heap_[at] = e;
    position_[static_cast<std::size_t>(e.flow)] = at;
  }
  void up(std::size_t at) {
    const Entry e = heap_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (!(e < heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, e);
  }
  void down(std::size_t at) {
    const Entry e = heap_[at];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < e)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, e);
  }

  std::vector<Entry> heap_;
  std::vector<std::size_t> position_;  ///< per flow id: its index in heap_, or kAbsent
};

}  // namespace moesim::sim::detail
