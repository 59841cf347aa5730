#include "MaxMin.hpp"

#include <algorithm>
#include <numeric>
#include <queue>

namespace moesim::sim::detail {

/*
 * Progressive filling, bottleneck first: all unfrozen demands share one rising level; resource r fills
 * when level = (capacity_r − rate already frozen on r) / unfrozen users of r. The resource that fills
 * first (lowest such level; ties by index) freezes its users at that level, which can only raise the
 * fill level of the other resources they cross. A min-heap with per-resource versions finds the next
 * one in O(log R), so a recompute costs O((F·path + R) log R) instead of one full scan per level.
 * A demand's own cap is a private resource with one user.
 */
std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<Demand>& demands) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::size_t n = demands.size();
  std::vector<double> cap = capacity;
  std::vector<std::vector<int>> crossed(n);
  for (std::size_t f = 0; f < n; ++f) {
    crossed[f] = demands[f].resources;
    if (demands[f].cap < kInf) {
      crossed[f].push_back(static_cast<int>(cap.size()));
      cap.push_back(demands[f].cap);
    }
  }
  const std::size_t r_count = cap.size();
  std::vector<std::vector<int>> users_of(r_count);
  std::vector<int> users(r_count, 0);
  std::vector<double> frozen(r_count, 0.0);
  std::vector<double> rate(n, kInf);
  std::vector<char> done(n, 0);
  for (std::size_t f = 0; f < n; ++f) {
    for (int r : crossed[f]) {
      users_of[static_cast<std::size_t>(r)].push_back(static_cast<int>(f));
      ++users[static_cast<std::size_t>(r)];
    }
  }
  using Entry = std::pair<double, int>;  // (fill level, resource)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  std::vector<double> level(r_count, kInf);
  auto refresh = [&](std::size_t r) {
    if (users[r] == 0) return;
    level[r] = std::max(0.0, (cap[r] - frozen[r]) / users[r]);
    heap.emplace(level[r], static_cast<int>(r));
  };
  for (std::size_t r = 0; r < r_count; ++r) refresh(r);
  while (!heap.empty()) {
    auto [fill, r_int] = heap.top();
    heap.pop();
    const auto r = static_cast<std::size_t>(r_int);
    if (users[r] == 0 || fill != level[r]) continue;  // stale entry
    for (int f_int : users_of[r]) {
      const auto f = static_cast<std::size_t>(f_int);
      if (done[f]) continue;
      done[f] = 1;
      rate[f] = fill;
      for (int q_int : crossed[f]) {
        const auto q = static_cast<std::size_t>(q_int);
        --users[q];
        frozen[q] += fill;
        if (q != r) refresh(q);
      }
    }
  }
  return rate;
}

std::vector<double> water_fill(double capacity, const std::vector<double>& caps) {
  return weighted_water_fill(capacity, caps, std::vector<double>(caps.size(), 1.0));
}

// Consumers whose cap is smallest per unit of weight are satisfied first; the others split what is
// left in proportion to their weights.
std::vector<double> weighted_water_fill(double capacity, const std::vector<double>& caps,
                                        const std::vector<double>& weights) {
  std::vector<std::size_t> order(caps.size());
  std::iota(order.begin(), order.end(), 0);
  auto per_weight = [&](std::size_t i) {
    return weights[i] > 0 ? caps[i] / weights[i] : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return per_weight(a) < per_weight(b); });
  std::vector<double> share(caps.size(), 0.0);
  double left = capacity;
  double weight_left = 0;
  for (double w : weights) weight_left += std::max(w, 0.0);
  for (std::size_t i : order) {
    const double w = std::max(weights[i], 0.0);
    if (w <= 0 || weight_left <= 0) continue;
    share[i] = std::min(caps[i], std::max(left, 0.0) * w / weight_left);
    left -= share[i];
    weight_left -= w;
  }
  return share;
}

}  // namespace moesim::sim::detail
