#pragma once
/** @file Max-min fair rates kept up to date as flows come and go and capacities change. */
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "IndexedHeap.hpp"

namespace moesim::sim::detail {

/**
 * @brief A max-min fair sharing system that re-solves only what a change can reach.
 *
 * max_min_rates() fills progressively: resources pop from a heap in (fill level, order) order, and
 * each pop freezes at its level the flows still rising through it. This system keeps the record of
 * its last filling (the pops in order, the flows each one froze, and each resource's frozen sum and
 * frozen-user count after every pop that touched it), so that after a change it resumes the filling
 * at the first pop the change can alter instead of starting over:
 *   - a flow removed: no pop before the one that froze it changes. Until then it only counted as a
 *     user of resources that had not filled, and without it they fill later, never sooner;
 *   - a capacity raised: no pop before that resource's own pop changes;
 *   - a capacity lowered or flows added: no pop changes before the first one that the resource, at
 *     its new level, would come before (found by replaying its level along the recorded pops).
 * Before that pop every resource's state is what a fresh filling has there, so the filling goes on
 * from it over the flows not frozen yet, with the same arithmetic in the same order. The rates are
 * bit-identical to max_min_rates() over all flows, resources indexed by `order` and flows by
 * creation (SimGrid's selective update re-solves whole connected components instead; in an
 * all-to-all every flow is connected to every other one).
 *
 * Changes are collected and applied by solve(). Flow and resource ids are reused after the solve
 * that follows their removal.
 */
class MaxMinSystem {
 public:
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  static constexpr std::size_t kScanLimit = 192;

  /** @brief How solve() finds the rates. */
  enum class Mode {
    INCREMENTAL,   ///< resume the last filling where the changes reach it
    FROM_SCRATCH,  ///< a full max_min_rates() over every live flow each time (the engine before this class)
    CHECKED,       ///< INCREMENTAL, then compare every live flow's rate, bit for bit, with FROM_SCRATCH
  };
  /**
   * @brief `scan_limit`: up to this many resources in a filling, the next pop is found by a scan, past it
   * from a heap (the same pop either way; tests set it to exercise both).
   */
  explicit MaxMinSystem(Mode mode = Mode::INCREMENTAL, std::size_t scan_limit = kScanLimit)
      : mode_(mode), scan_limit_(scan_limit) {}

  /** @brief A resource; `order` ranks it among the others for ties (lower pops first at equal level). */
  int add_resource(double capacity, std::uint64_t order);
  /** @brief Frees a resource no flow crosses; its id is reused after the next solve(). */
  void remove_resource(int resource);
  void set_capacity(int resource, double capacity);
  double capacity(int resource) const { return resources_[static_cast<std::size_t>(resource)].capacity; }

  /**
   * @brief A flow over `resources` (repeats count twice, as in max_min_rates). It rises with the
   * others until one of its resources fills; with no resource its rate is kUnlimited.
   */
  int add_flow(const std::vector<int>& resources);
  void remove_flow(int flow);
  /** @brief The rate of the last solve(). */
  double rate(int flow) const { return flows_[static_cast<std::size_t>(flow)].rate; }
  /** @brief Creation rank of a live flow: ties between flows resolve in this order. */
  std::uint64_t creation(int flow) const { return flows_[static_cast<std::size_t>(flow)].creation; }

  /**
   * @brief Applies the changes since the last call. Returns the flows whose rate changed (every
   * added flow among them) in no particular order; FROM_SCRATCH returns every live flow. CHECKED
   * throws InternalError when a rate differs from the full solve's.
   */
  const std::vector<int>& solve();
  /** @brief Live flows, in creation order. */
  std::vector<int> live_flows() const;
  /** @brief max_min_rates() over every live flow: the rates of `live_flows()`, in that order. */
  std::vector<double> rates_from_scratch() const;

 private:
  /** After the pop `pop`, `frozen_users` of the resource's crossings were frozen, summing to `frozen`. */
  struct Mark {
    int pop;
    int frozen_users;
    double frozen;
  };
  struct Resource {
    double capacity = 0;
    double capacity_at_solve = 0;  ///< before the changes of this round
    std::uint64_t order = 0;
    int crossings = 0;  ///< live flows crossing it, with repeats
    int pop = -1;       ///< the pop at which it filled in the last solve, or -1
    std::vector<Mark> marks;
    bool live = false;
    bool capacity_changed = false;
    // Scratch of one solve.
    std::uint64_t stamp = 0;
    std::uint64_t refresh_stamp = 0;
    int users = 0;  ///< crossings not frozen yet
    double frozen = 0;
    double level = 0;
    std::vector<int> rising;  ///< unfrozen flows crossing it, in creation order
  };
  /** The resources a flow crosses: a few inline (a pairwise flow crosses two to five), more on the heap. */
  class Crossings {
   public:
    void assign(const std::vector<int>& ids) {
      size_ = ids.size();
      if (size_ <= kInline) {
        std::copy(ids.begin(), ids.end(), inline_.begin());
      } else {
        spilled_ = ids;
      }
    }
    void clear() {
      size_ = 0;
      spilled_.clear();
    }
    const int* begin() const { return size_ <= kInline ? inline_.data() : spilled_.data(); }
    const int* end() const { return begin() + size_; }
    bool empty() const { return size_ == 0; }

   private:
    static constexpr std::size_t kInline = 6;
    std::size_t size_ = 0;
    std::array<int, kInline> inline_{};
    std::vector<int> spilled_;
  };
  struct Flow {
    Crossings resources;
    std::uint64_t creation = 0;
    double rate = kUnlimited;
    int pop = -1;  ///< the pop that froze it, or -1 (not solved yet, or crosses nothing)
    bool live = false;
    bool added = false;  ///< not solved yet
  };
  struct Pop {
    int resource;
    double fill;
    std::uint64_t order;
    int first_frozen;  ///< index into frozen_ of the first flow it froze
  };

  void solve_incrementally();
  void solve_from_scratch();
  void check_against_scratch() const;
  int first_changed_pop();
  int first_pop_preceded_by(const Resource& resource, int resource_id, int bound) const;
  void refill_from(int pop);
  void collect_rising(int from);
  void fill_rising();
  int next_from_heap();
  int next_by_scan();
  void finish_round();
  Resource& res(int r) { return resources_[static_cast<std::size_t>(r)]; }
  Flow& flow(int f) { return flows_[static_cast<std::size_t>(f)]; }

  Mode mode_;
  std::size_t scan_limit_;
  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  /** Per flow, the stamp of the filling that froze it last: apart from Flow, as pops scan it for every
   * crossing. */
  std::vector<std::uint64_t> frozen_stamp_;
  std::vector<int> free_resources_, free_flows_;
  std::uint64_t next_creation_ = 0;
  std::uint64_t stamp_ = 0;

  std::vector<Pop> pops_;
  std::vector<int> frozen_;  ///< flows in the order the filling froze them

  // Changes since the last solve.
  std::vector<int> added_, removed_, capacity_changed_, removed_resources_;

  /** Where a resource stands in the filling: lowest level first, ties by order. */
  struct FillKey {
    double level;
    std::uint64_t order;
    bool operator<(const FillKey& o) const {
      return level < o.level || (level == o.level && order < o.order);
    }
  };

  // Scratch.
  std::vector<int> changed_, rising_, touched_, active_, refreshed_;
  std::vector<double> old_rate_;
  IndexedHeap<FillKey> heap_;
};

}  // namespace moesim::sim::detail
