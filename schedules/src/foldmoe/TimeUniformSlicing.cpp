#include "moesim/schedules/TimeUniformSlicing.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "moesim/common/Error.hpp"

namespace moesim::schedules {

double attention_slice_flops(std::int64_t l, std::int64_t c, std::int64_t hidden, std::int64_t heads) {
  const double H = static_cast<double>(hidden), h = static_cast<double>(heads);
  const double tokens = static_cast<double>(l), context = static_cast<double>(c);
  return (4.0 * H + 3.0 * h) * tokens * context + 8.0 * H * H * tokens;
}

double ideal_slice_flops(std::int64_t seq_len, int degree, std::int64_t hidden, std::int64_t heads) {
  // Σ_{i=1..L} FLOPs(1, i) = (4H + 3h)·L(L+1)/2 + 8H²·L.
  const double H = static_cast<double>(hidden), h = static_cast<double>(heads);
  const double L = static_cast<double>(seq_len);
  return ((4.0 * H + 3.0 * h) * L * (L + 1.0) / 2.0 + 8.0 * H * H * L) / degree;
}

std::vector<std::int64_t> time_uniform_slices(std::int64_t seq_len, int degree, std::int64_t hidden,
                                              std::int64_t heads) {
  if (seq_len < 1 || degree < 1 || degree > seq_len || hidden < 1 || heads < 1) {
    throw ScheduleError("time-uniform slicing needs L >= 1, 1 <= d <= L, H >= 1 and h >= 1 (L = " +
                        std::to_string(seq_len) + ", d = " + std::to_string(degree) + ")");
  }
  const std::int64_t L = seq_len;
  const std::int64_t d = degree;
  const double target = ideal_slice_flops(L, degree, hidden, heads);
  const std::int64_t m = (L + d - 1) / d;
  std::vector<std::int64_t> slices{m};
  std::int64_t start = m;
  while (start < L) {
    const auto count = static_cast<std::int64_t>(slices.size());
    std::int64_t end = std::min(L, std::max(start + 1, (count + 1) * m));
    if (L - end >= d - count) {
      auto miss = [&](std::int64_t i) {
        return std::abs(attention_slice_flops(i - start, i, hidden, heads) - target);
      };
      std::int64_t i = end;
      while (i < L && attention_slice_flops(i - start, i, hidden, heads) < target) ++i;
      // i is the first end whose FLOPs reach t̂ (or L); the minimum is i or the end just before it.
      end = i > end && miss(i - 1) <= miss(i) ? i - 1 : i;
    }
    slices.push_back(end - start);
    start = end;
  }
  return slices;
}

}  // namespace moesim::schedules
