#include "MaxMin.hpp"

#include <algorithm>
#include <numeric>

namespace moesim::sim::detail {

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<Demand>& demands) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::size_t n = demands.size();
  std::vector<double> rate(n, 0.0);
  std::vector<char> frozen(n, 0);
  std::vector<double> remaining = capacity;
  std::vector<int> users(capacity.size(), 0);
  std::size_t active = 0;
  for (std::size_t f = 0; f < n; ++f) {
    if (demands[f].resources.empty() && demands[f].cap == kInf) {
      rate[f] = kInf;
      frozen[f] = 1;
      continue;
    }
    for (int r : demands[f].resources) ++users[static_cast<std::size_t>(r)];
    ++active;
  }
  while (active > 0) {
    // The common increment every unfrozen demand can still take.
    double step = kInf;
    for (std::size_t r = 0; r < remaining.size(); ++r) {
      if (users[r] > 0) step = std::min(step, remaining[r] / users[r]);
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (!frozen[f]) step = std::min(step, demands[f].cap - rate[f]);
    }
    step = std::max(step, 0.0);
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      rate[f] += step;
    }
    for (std::size_t r = 0; r < remaining.size(); ++r) {
      if (users[r] > 0) remaining[r] -= step * users[r];
    }
    // Freeze demands at their cap or crossing a resource that is now full.
    std::vector<char> saturated(remaining.size(), 0);
    for (std::size_t r = 0; r < remaining.size(); ++r) {
      saturated[r] = users[r] > 0 && remaining[r] <= capacity[r] * 1e-12;
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      bool stop = rate[f] >= demands[f].cap * (1 - 1e-12);
      for (int r : demands[f].resources) stop = stop || saturated[static_cast<std::size_t>(r)];
      if (!stop) continue;
      frozen[f] = 1;
      --active;
      for (int r : demands[f].resources) --users[static_cast<std::size_t>(r)];
    }
  }
  return rate;
}

std::vector<double> water_fill(double capacity, const std::vector<double>& caps) {
  std::vector<std::size_t> order(caps.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return caps[a] < caps[b]; });
  std::vector<double> share(caps.size(), 0.0);
  double left = capacity;
  std::size_t remaining = caps.size();
  for (std::size_t i : order) {
    double fair = left / static_cast<double>(remaining);
    share[i] = std::min(caps[i], fair);
    left -= share[i];
    --remaining;
  }
  return share;
}

}  // namespace moesim::sim::detail
