#include "MaxMinSystem.hpp"

#include <algorithm>
#include <numeric>

#include "MaxMin.hpp"
#include "moesim/common/Check.hpp"

namespace moesim::sim::detail {

int MaxMinSystem::add_resource(double capacity, std::uint64_t order) {
  int id = 0;
  if (free_resources_.empty()) {
    id = static_cast<int>(resources_.size());
    resources_.emplace_back();
  } else {
    id = free_resources_.back();
    free_resources_.pop_back();
  }
  Resource& r = res(id);
  r.capacity = r.capacity_at_solve = capacity;
  r.order = order;
  r.crossings = 0;
  r.pop = -1;
  r.marks.clear();
  r.live = true;
  r.capacity_changed = false;
  return id;
}

void MaxMinSystem::remove_resource(int resource) {
  Resource& r = res(resource);
  MOE_CHECK(r.live && r.crossings == 0) << "resource " << resource << " removed while flows cross it";
  r.live = false;
  removed_resources_.push_back(resource);
}

void MaxMinSystem::set_capacity(int resource, double capacity) {
  Resource& r = res(resource);
  if (r.capacity == capacity) return;
  r.capacity = capacity;
  if (!r.capacity_changed) {
    r.capacity_changed = true;
    capacity_changed_.push_back(resource);
  }
}

int MaxMinSystem::add_flow(const std::vector<int>& resources) {
  int id = 0;
  if (free_flows_.empty()) {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
    frozen_stamp_.push_back(0);
  } else {
    id = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& f = flow(id);
  f.resources.assign(resources);
  f.creation = next_creation_++;
  f.rate = kUnlimited;
  f.pop = -1;
  f.live = true;
  f.added = true;
  for (int r : resources) {
    MOE_CHECK(res(r).live) << "flow over a removed resource " << r;
    ++res(r).crossings;
  }
  added_.push_back(id);
  return id;
}

void MaxMinSystem::remove_flow(int id) {
  Flow& f = flow(id);
  MOE_CHECK(f.live) << "flow " << id << " removed twice";
  f.live = false;
  for (int r : f.resources) --res(r).crossings;
  removed_.push_back(id);
}

std::vector<int> MaxMinSystem::live_flows() const {
  std::vector<int> live;
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (flows_[f].live) live.push_back(static_cast<int>(f));
  }
  std::sort(live.begin(), live.end(), [&](int a, int b) {
    return flows_[static_cast<std::size_t>(a)].creation < flows_[static_cast<std::size_t>(b)].creation;
  });
  return live;
}

std::vector<double> MaxMinSystem::rates_from_scratch() const {
  std::vector<int> live_resources;
  for (std::size_t r = 0; r < resources_.size(); ++r) {
    if (resources_[r].live) live_resources.push_back(static_cast<int>(r));
  }
  std::sort(live_resources.begin(), live_resources.end(), [&](int a, int b) {
    return resources_[static_cast<std::size_t>(a)].order < resources_[static_cast<std::size_t>(b)].order;
  });
  std::vector<int> index(resources_.size(), -1);
  std::vector<double> capacity;
  for (int r : live_resources) {
    index[static_cast<std::size_t>(r)] = static_cast<int>(capacity.size());
    capacity.push_back(resources_[static_cast<std::size_t>(r)].capacity);
  }
  std::vector<Demand> demands;
  for (int f : live_flows()) {
    Demand d;
    for (int r : flows_[static_cast<std::size_t>(f)].resources)
      d.resources.push_back(index[static_cast<std::size_t>(r)]);
    demands.push_back(std::move(d));
  }
  return max_min_rates(capacity, demands);
}

const std::vector<int>& MaxMinSystem::solve() {
  changed_.clear();
  if (mode_ == Mode::FROM_SCRATCH) {
    solve_from_scratch();
  } else {
    solve_incrementally();
    if (mode_ == Mode::CHECKED) check_against_scratch();
  }
  finish_round();
  return changed_;
}

void MaxMinSystem::solve_from_scratch() {
  if (added_.empty() && removed_.empty() && capacity_changed_.empty()) return;
  changed_ = live_flows();
  const std::vector<double> rates = rates_from_scratch();
  for (std::size_t i = 0; i < changed_.size(); ++i) flow(changed_[i]).rate = rates[i];
}

void MaxMinSystem::check_against_scratch() const {
  const std::vector<int> live = live_flows();
  const std::vector<double> rates = rates_from_scratch();
  for (std::size_t i = 0; i < live.size(); ++i) {
    const double incremental = flows_[static_cast<std::size_t>(live[i])].rate;
    MOE_CHECK(incremental == rates[i] || (incremental != incremental && rates[i] != rates[i]))
        << "incremental max-min rate " << incremental << " of flow " << live[i]
        << " differs from the full solve's " << rates[i];
  }
}

void MaxMinSystem::solve_incrementally() {
  bool new_flows = false;
  for (int f : added_) {
    if (!flow(f).live) continue;
    if (flow(f).resources.empty()) {
      changed_.push_back(f);  // crosses nothing: unlimited, never frozen
    } else {
      new_flows = true;
    }
  }
  const int pop = first_changed_pop();
  if (pop < static_cast<int>(pops_.size()) || new_flows) refill_from(pop);
}

void MaxMinSystem::finish_round() {
  for (int f : removed_) {
    Flow& gone = flow(f);
    gone.resources.clear();
    gone.added = false;
    free_flows_.push_back(f);
  }
  for (int f : added_) flow(f).added = false;
  for (int r : capacity_changed_) {
    res(r).capacity_changed = false;
    res(r).capacity_at_solve = res(r).capacity;
  }
  for (int r : removed_resources_) {
    res(r).marks.clear();
    free_resources_.push_back(r);
  }
  added_.clear();
  removed_.clear();
  capacity_changed_.clear();
  removed_resources_.clear();
}

// The earliest pop of the last filling that the changes of this round can alter.
int MaxMinSystem::first_changed_pop() {
  int first = static_cast<int>(pops_.size());
  for (int f : removed_) {
    if (flow(f).pop >= 0) first = std::min(first, flow(f).pop);
  }
  const std::uint64_t seen = ++stamp_;
  touched_.clear();  // resources whose level may have dropped
  for (int r : capacity_changed_) {
    Resource& resource = res(r);
    if (!resource.live || resource.capacity == resource.capacity_at_solve) continue;
    if (resource.capacity > resource.capacity_at_solve) {
      if (resource.pop >= 0) first = std::min(first, resource.pop);  // it now fills later, if at all
      continue;
    }
    resource.stamp = seen;
    touched_.push_back(r);
  }
  for (int f : added_) {
    if (!flow(f).live) continue;
    for (int r : flow(f).resources) {
      if (res(r).stamp == seen) continue;
      res(r).stamp = seen;
      touched_.push_back(r);
    }
  }
  for (int r : touched_) first = first_pop_preceded_by(res(r), r, first);
  return first;
}

/*
 * Replays `resource`'s level along the recorded pops, with its current capacity and users. Before
 * pop j it has the users and frozen sum of its last mark before j; it would have been popped first
 * if its level then came before pop j's (fill, order). The pops before `bound` only are examined.
 */
int MaxMinSystem::first_pop_preceded_by(const Resource& resource, int resource_id, int bound) const {
  std::size_t mark = 0;
  int frozen_users = 0;
  double frozen = 0;
  for (int j = 0; j < bound; ++j) {
    const Pop& p = pops_[static_cast<std::size_t>(j)];
    while (mark < resource.marks.size() && resource.marks[mark].pop < j) {
      frozen_users = resource.marks[mark].frozen_users;
      frozen = resource.marks[mark].frozen;
      ++mark;
    }
    if (p.resource == resource_id) return j;
    const int users = resource.crossings - frozen_users;
    if (users <= 0) continue;
    const double level = std::max(0.0, (resource.capacity - frozen) / users);
    if (level < p.fill || (level == p.fill && resource.order < p.order)) return j;
  }
  return bound;
}

/*
 * Progressive filling as in max_min_rates, resumed before pop `from`: the flows it and later pops froze
 * (and the added ones) rise again from each resource's frozen sum as it stood before that pop.
 */
void MaxMinSystem::refill_from(int from) {
  collect_rising(from);
  old_rate_.clear();
  for (int f : rising_) old_rate_.push_back(flow(f).rate);
  fill_rising();
  for (std::size_t i = 0; i < rising_.size(); ++i) {
    const Flow& f = flow(rising_[i]);
    if (f.added || f.rate != old_rate_[i]) changed_.push_back(rising_[i]);
  }
}

// The flows frozen at pop `from` or later, and the added ones; the record from `from` on is dropped.
void MaxMinSystem::collect_rising(int from) {
  const std::size_t first_frozen =
      from < static_cast<int>(pops_.size())
          ? static_cast<std::size_t>(pops_[static_cast<std::size_t>(from)].first_frozen)
          : frozen_.size();
  rising_.clear();
  for (std::size_t i = first_frozen; i < frozen_.size(); ++i) {
    if (flow(frozen_[i]).live) rising_.push_back(frozen_[i]);
  }
  for (int f : added_) {
    if (flow(f).live && !flow(f).resources.empty()) rising_.push_back(f);
  }
  const std::uint64_t forgotten = ++stamp_;
  auto forget = [&](int f) {
    for (int r : flow(f).resources) {
      Resource& resource = res(r);
      if (resource.stamp == forgotten) continue;
      resource.stamp = forgotten;
      while (!resource.marks.empty() && resource.marks.back().pop >= from) resource.marks.pop_back();
      if (resource.pop >= from) resource.pop = -1;
    }
  };
  for (int f : rising_) forget(f);
  for (int f : removed_) {
    if (flow(f).pop >= 0) forget(f);
  }
  frozen_.resize(first_frozen);
  pops_.resize(static_cast<std::size_t>(from));
}

/*
 * The filling loop of max_min_rates over rising_. Its resources start from their last marks. The next pop
 * is the resource with users of lowest (level, order): found by a scan when few resources take part, from
 * a heap of (level, order) entries (stale once a level moves on) when many do; both pick the same one.
 * The order in which one pop freezes its flows does not matter: each adds the same fill to the resources
 * it crosses.
 */
void MaxMinSystem::fill_rising() {
  const std::uint64_t setup = ++stamp_;
  active_.clear();
  for (int f : rising_) {
    for (int r : flow(f).resources) {
      Resource& resource = res(r);
      if (resource.stamp != setup) {
        resource.stamp = setup;
        resource.users = 0;
        resource.frozen = resource.marks.empty() ? 0.0 : resource.marks.back().frozen;
        resource.rising.clear();
        active_.push_back(r);
      }
      ++resource.users;
      resource.rising.push_back(f);
    }
  }
  const bool use_heap = active_.size() > scan_limit_;
  heap_.clear();
  auto refresh = [&](int r) {
    Resource& resource = res(r);
    if (resource.users == 0) {
      if (use_heap) heap_.erase(r);
      return;
    }
    resource.level = std::max(0.0, (resource.capacity - resource.frozen) / resource.users);
    if (use_heap) heap_.set(r, FillKey{resource.level, resource.order});
  };
  for (int r : active_) refresh(r);

  const std::uint64_t frozen_now = ++stamp_;
  std::size_t unfrozen = rising_.size();
  while (unfrozen > 0) {  // what is left to pop after the last freeze would change nothing
    const int next = use_heap ? next_from_heap() : next_by_scan();
    MOE_CHECK(next >= 0) << "max-min filling ran out of resources with " << unfrozen << " flows unfrozen";
    Resource& full = res(next);
    const double fill = full.level;
    const int pop = static_cast<int>(pops_.size());
    pops_.push_back(Pop{next, fill, full.order, static_cast<int>(frozen_.size())});
    full.pop = pop;
    const std::uint64_t refresh_round = ++stamp_;
    refreshed_.clear();
    for (int f : full.rising) {
      std::uint64_t& frozen_stamp = frozen_stamp_[static_cast<std::size_t>(f)];
      if (frozen_stamp == frozen_now) continue;
      frozen_stamp = frozen_now;
      Flow& frozen_flow = flow(f);
      --unfrozen;
      frozen_flow.rate = fill;
      frozen_flow.pop = pop;
      frozen_.push_back(f);
      for (int r : frozen_flow.resources) {
        Resource& crossed = res(r);
        --crossed.users;
        crossed.frozen += fill;
        if (crossed.refresh_stamp != refresh_round) {
          crossed.refresh_stamp = refresh_round;
          refreshed_.push_back(r);
        }
      }
    }
    // One mark per resource the pop touched; refreshing once after all of the pop's freezes leaves the
    // same levels as refreshing after each.
    for (int r : refreshed_) {
      Resource& crossed = res(r);
      crossed.marks.push_back(Mark{pop, crossed.crossings - crossed.users, crossed.frozen});
      if (r != next) refresh(r);
    }
  }
}

int MaxMinSystem::next_from_heap() {
  if (heap_.empty()) return -1;
  const int next = heap_.top().id;
  heap_.pop();
  return next;
}

int MaxMinSystem::next_by_scan() {
  int best = -1;
  double best_level = 0;
  std::uint64_t best_order = 0;
  for (std::size_t i = 0; i < active_.size();) {
    const int r = active_[i];
    const Resource& resource = res(r);
    if (resource.users == 0) {  // filled: out of the running for good
      active_[i] = active_.back();
      active_.pop_back();
      continue;
    }
    if (best < 0 || resource.level < best_level ||
        (resource.level == best_level && resource.order < best_order)) {
      best = r;
      best_level = resource.level;
      best_order = resource.order;
    }
    ++i;
  }
  return best;
}

}  // namespace moesim::sim::detail
