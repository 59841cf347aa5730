#include "Routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace moesim::kernels::layer {
namespace {

// mt19937_64 is specified bit for bit; the <random> distributions are not, so draw by hand.
double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  return seed * 0x9E3779B97F4A7C15ULL + stream * 0xBF58476D1CE4E5B9ULL + 1;
}

void shuffle(std::vector<int>& values, std::mt19937_64& rng) {
  for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[rng() % i]);
}

std::vector<double> expert_weights(const RoutingSpec& spec, std::uint64_t seed, int experts) {
  std::vector<double> weight(static_cast<std::size_t>(experts), 1.0);
  if (spec.kind != RoutingKind::ZIPF) return weight;
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(stream_seed(seed, 0x21F));  // one permutation for all ranks: hot experts are global
  shuffle(order, rng);
  for (int r = 0; r < experts; ++r)
    weight[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] =
        1.0 / std::pow(r + 1.0, spec.zipf_exponent);
  return weight;
}

// k distinct experts, each drawn with probability ∝ its weight among those not yet drawn.
void draw_distinct(const std::vector<double>& weight, int top_k, std::mt19937_64& rng, int* out) {
  std::vector<double> left = weight;
  for (int j = 0; j < top_k; ++j) {
    const double total = std::accumulate(left.begin(), left.end(), 0.0);
    double target = unit(rng) * total;
    std::size_t pick = 0;
    for (; pick + 1 < left.size(); ++pick) {
      if (left[pick] > 0 && target < left[pick]) break;
      target -= left[pick];
    }
    while (left[pick] <= 0) pick = (pick + left.size() - 1) % left.size();  // rounding at the end
    out[j] = static_cast<int>(pick);
    left[pick] = 0;
  }
}

void balanced(TokenRouting& r, int rank, std::int64_t tokens, int experts, int top_k, std::mt19937_64& rng) {
  const std::int64_t slots = tokens * top_k;
  const std::int64_t rotate = static_cast<std::int64_t>(rank) * (slots % experts);
  std::vector<int> token_order(static_cast<std::size_t>(tokens));
  std::iota(token_order.begin(), token_order.end(), 0);
  shuffle(token_order, rng);
  for (std::int64_t i = 0; i < tokens; ++i) {
    const auto t = static_cast<std::size_t>(token_order[static_cast<std::size_t>(i)]);
    for (int j = 0; j < top_k; ++j)
      r.expert[t * static_cast<std::size_t>(top_k) + static_cast<std::size_t>(j)] =
          static_cast<int>((i * top_k + j + rotate) % experts);
  }
}

void gate_weights(TokenRouting& r, std::int64_t tokens, int top_k, std::mt19937_64& rng) {
  for (std::int64_t t = 0; t < tokens; ++t) {
    float* w = r.weight.data() + t * top_k;
    float sum = 0;
    for (int j = 0; j < top_k; ++j) sum += (w[j] = static_cast<float>(0.5 + unit(rng)));
    for (int j = 0; j < top_k; ++j) w[j] /= sum;
  }
}

}  // namespace

RoutingSpec parse_routing(const std::string& text) {
  RoutingSpec spec;
  spec.text = text;
  if (text == "balanced") {
    spec.kind = RoutingKind::BALANCED;
  } else if (text == "uniform") {
    spec.kind = RoutingKind::UNIFORM;
  } else if (text.rfind("zipf:", 0) == 0) {
    spec.kind = RoutingKind::ZIPF;
    std::size_t used = 0;
    try {
      spec.zipf_exponent = std::stod(text.substr(5), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() - 5 || !(spec.zipf_exponent > 0) ||
        !std::isfinite(spec.zipf_exponent))
      throw std::invalid_argument("--routing " + text + ": zipf needs a positive exponent, e.g. zipf:1.2");
  } else {
    throw std::invalid_argument("--routing " + text + ": expected balanced, uniform or zipf:S");
  }
  return spec;
}

std::vector<TokenRouting> route_tokens(const RoutingSpec& spec, std::uint64_t seed, int ranks,
                                       std::int64_t tokens, int experts, int top_k) {
  if (top_k > experts) throw std::invalid_argument("top_k exceeds the number of experts");
  const std::vector<double> weight = expert_weights(spec, seed, experts);
  std::vector<TokenRouting> result(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    TokenRouting& r = result[static_cast<std::size_t>(rank)];
    r.expert.assign(static_cast<std::size_t>(tokens * top_k), 0);
    r.weight.assign(r.expert.size(), 0.0f);
    std::mt19937_64 rng(stream_seed(seed, 1 + static_cast<std::uint64_t>(rank)));
    if (spec.kind == RoutingKind::BALANCED) {
      balanced(r, rank, tokens, experts, top_k, rng);
    } else {
      for (std::int64_t t = 0; t < tokens; ++t)
        draw_distinct(weight, top_k, rng, r.expert.data() + t * top_k);
    }
    gate_weights(r, tokens, top_k, rng);
  }
  return result;
}

std::vector<std::vector<std::int64_t>> tokens_to_expert(const std::vector<TokenRouting>& routing,
                                                        int experts) {
  std::vector<std::vector<std::int64_t>> matrix(
      routing.size(), std::vector<std::int64_t>(static_cast<std::size_t>(experts), 0));
  for (std::size_t s = 0; s < routing.size(); ++s)
    for (int e : routing[s].expert) ++matrix[s][static_cast<std::size_t>(e)];
  return matrix;
}

}  // namespace moesim::kernels::layer
