#pragma once
/** @file A binary min-heap of ids whose keys change in place. */
#include <cstddef>
#include <vector>

namespace moesim::sim::detail {

/**
 * @brief At most one entry per id (a non-negative int); set() inserts or moves it, erase() drops it.
 * `Key` needs operator<, and distinct ids must never have equal keys, so the order is total.
 */
template <typename Key>
class IndexedHeap {
 public:
  struct Entry {
    Key key;
    int id;
  };

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }
  void clear() {
    for (const Entry& e : heap_) position_[static_cast<std::size_t>(e.id)] = kAbsent;
    heap_.clear();
  }

  void set(int id, const Key& key) {
    const auto i = static_cast<std::size_t>(id);
    if (i >= position_.size()) position_.resize(i + 1, kAbsent);
    if (position_[i] == kAbsent) {
      position_[i] = heap_.size();
      heap_.push_back(Entry{key, id});
      up(heap_.size() - 1);
      return;
    }
    const std::size_t at = position_[i];
    const bool smaller = key < heap_[at].key;
    heap_[at].key = key;
    if (smaller) {
      up(at);
    } else {
      down(at);
    }
  }

  void erase(int id) {
    const auto i = static_cast<std::size_t>(id);
    if (i >= position_.size() || position_[i] == kAbsent) return;
    const std::size_t at = position_[i];
    position_[i] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;
    place(at, last);
    up(at);
    down(position_[static_cast<std::size_t>(last.id)]);
  }

  void pop() { erase(heap_.front().id); }

 private:
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  void place(std::size_t at, const Entry& e) {
    heap_[at] = e;
    position_[static_cast<std::size_t>(e.id)] = at;
  }
  void up(std::size_t at) {
    const Entry e = heap_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (!(e.key < heap_[parent].key)) break;
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
      if (child + 1 < n && heap_[child + 1].key < heap_[child].key) ++child;
      if (!(heap_[child].key < e.key)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, e);
  }

  std::vector<Entry> heap_;
  std::vector<std::size_t> position_;  ///< per id: its index in heap_, or kAbsent
};

}  // namespace moesim::sim::detail
