#include "moesim/kernels/UnevenSplit.hpp"

#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

namespace moesim::kernels {
namespace {

// One row: weights scaled so the row sums to exactly `total`; the rounding remainder goes to the
// rank's own chunk, which never crosses a link.
void draw_row(std::mt19937_64& rng, std::size_t row, std::size_t ranks, std::uint64_t total,
              std::vector<std::uint64_t>& counts) {
  std::uniform_real_distribution<double> weight(0.25, 1.75);
  std::vector<double> weights(ranks);
  for (double& w : weights) w = weight(rng);
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::uint64_t assigned = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto share = static_cast<std::uint64_t>(weights[r] / sum * static_cast<double>(total));
    counts[row * ranks + r] = share;
    assigned += share;
  }
  counts[row * ranks + row] += total - assigned;
}

bool columns_fit(const std::vector<std::uint64_t>& counts, std::size_t ranks, std::uint64_t limit) {
  for (std::size_t r = 0; r < ranks; ++r) {
    std::uint64_t column = 0;
    for (std::size_t s = 0; s < ranks; ++s) column += counts[s * ranks + r];
    if (column > limit) return false;
  }
  return true;
}

}  // namespace

std::vector<std::uint64_t> uneven_all_to_all_counts(int ranks, std::uint64_t chunk, std::uint64_t seed) {
  if (ranks < 1) throw std::invalid_argument("uneven_all_to_all_counts: ranks must be >= 1");
  const auto n = static_cast<std::size_t>(ranks);
  const std::uint64_t total = chunk * n;
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> counts(n * n, 0);
  do {
    for (std::size_t s = 0; s < n; ++s) draw_row(rng, s, n, total, counts);
  } while (!columns_fit(counts, n, 2 * total));
  return counts;
}

std::vector<std::uint64_t> hot_rank_counts(int ranks, std::uint64_t chunk, double hot, bool outbound) {
  if (ranks < 2) throw std::invalid_argument("hot_rank_counts: ranks must be >= 2");
  if (!(hot >= 1 && hot < ranks)) throw std::invalid_argument("hot_rank_counts: hot must be in [1, ranks)");
  const auto n = static_cast<std::size_t>(ranks);
  const std::uint64_t total = chunk * n;
  const auto to_hot = static_cast<std::uint64_t>(hot * static_cast<double>(chunk));
  std::vector<std::uint64_t> counts(n * n, chunk);
  for (std::size_t s = 1; s < n; ++s) {
    counts[s * n] = to_hot;
    const std::uint64_t rest = total - to_hot;
    const std::uint64_t share = rest / (n - 1);
    for (std::size_t r = 1; r < n; ++r) counts[s * n + r] = share;
    counts[s * n + s] += rest - share * (n - 1);  // the rounding stays local
  }
  if (outbound) {
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t r = s + 1; r < n; ++r) std::swap(counts[s * n + r], counts[r * n + s]);
    }
  }
  return counts;
}

}  // namespace moesim::kernels
