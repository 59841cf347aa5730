#include "moesim/models/Routing.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::models {
namespace {

using Counts = std::vector<std::int64_t>;

// A draw rejected this many times (its expert already chosen by the token) falls back to an exact
// scan over the experts not chosen yet; both give the same distribution.
constexpr int kMaxRejections = 32;
// Stream 0 ranks the experts for zipf; stream r + 1 routes the tokens of rank r.
constexpr std::uint64_t kPopularityStream = 0;
// Input limits (docs/limits.md): a weight is a count or a share, and a recorded slot count is at most
// tokens x top_k of one rank, so 2^32 leaves room while every sum over 2^16 experts stays exact in int64.
constexpr double kMaxWeight = 1e15;
constexpr double kMinWeight = 1e-15;  // non-zero weights span 30 decades at most
constexpr double kMaxZipfExponent = 100;
constexpr std::int64_t kMaxRecordedSlots = std::int64_t{1} << 32;

[[noreturn]] void routing_text_error(const std::string& text, const std::string& detail) {
  throw ConfigError("", "--routing",
                    "= \"" + text.substr(0, 60) + "\": " + detail +
                        "expected balanced, uniform, zipf:S (S > 0), histogram:FILE.json (a JSON array of "
                        "per-expert weights) or recorded:FILE.json (one array of per-expert slots per rank)");
}

RoutingSpec read_histogram(const std::string& file) {
  const nlohmann::json document = read_json_file(file);
  if (!document.is_array()) {
    throw ConfigError(file, "", "must be a JSON array of per-expert weights (numbers >= 0)");
  }
  RoutingSpec spec{RoutingSpec::Kind::HISTOGRAM, 0, {}, file, {}};
  for (std::size_t i = 0; i < document.size(); ++i) {
    const auto& value = document[i];
    if (!value.is_number() || !(value.get<double>() >= 0)) {
      throw ConfigError(file, "/" + std::to_string(i), "= " + shown_value(value) + ": must be a number >= 0");
    }
    if (value.get<double>() > kMaxWeight)
      throw ConfigError(file, "/" + std::to_string(i), "= " + shown_value(value) + ": must be <= 1e15");
    // The sampler divides by the total weight: a subnormal total overflows that to infinity (fuzzing found
    // it).
    if (value.get<double>() > 0 && value.get<double>() < kMinWeight)
      throw ConfigError(file, "/" + std::to_string(i),
                        "= " + shown_value(value) + ": must be 0 or >= 1e-15 (weights are relative)");
    spec.histogram.push_back(value.get<double>());
  }
  if (std::none_of(spec.histogram.begin(), spec.histogram.end(), [](double w) { return w > 0; })) {
    throw ConfigError(file, "", "must hold at least one weight > 0");
  }
  return spec;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::mt19937_64 make_stream(std::uint64_t seed, std::uint64_t stream) {
  return std::mt19937_64(splitmix64(splitmix64(seed) + stream));
}

// Uniform in [0, 1) with 53 random bits.
double unit_double(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform in [0, n): rejects the 2^64 mod n lowest outputs so every residue is equally likely.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

// Draws experts with probability ∝ weight, top_k distinct per token.
class WeightedSampler {
 public:
  explicit WeightedSampler(std::vector<double> weights)
      : weights_(std::move(weights)), cumulative_(weights_.size()) {
    std::partial_sum(weights_.begin(), weights_.end(), cumulative_.begin());
    for (std::size_t e = 0; e < weights_.size(); ++e) {
      if (weights_[e] > 0) last_positive_ = e;
    }
    // Guide table (indexed search): bucket k's search starts at the first expert whose cumulative weight
    // exceeds the start of bucket k - 1, one bucket early, so that a draw rounded into bucket k never
    // starts past its answer. The scan then finds what upper_bound finds.
    const std::size_t buckets = std::max<std::size_t>(1, weights_.size());
    bucket_scale_ = static_cast<double>(buckets) / cumulative_.back();
    guide_.resize(buckets + 1);
    for (std::size_t k = 0; k <= buckets; ++k) {
      const double start = k == 0 ? 0.0 : static_cast<double>(k - 1) / bucket_scale_;
      guide_[k] = static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), start) -
                                           cumulative_.begin());
    }
  }

  void draw_token(std::mt19937_64& rng, int top_k, std::vector<char>& chosen, Counts& counts) const {
    std::fill(chosen.begin(), chosen.end(), 0);
    for (int pick = 0; pick < top_k; ++pick) {
      const std::size_t expert = draw_excluding(rng, chosen);
      chosen[expert] = 1;
      ++counts[expert];
    }
  }

 private:
  std::size_t draw(std::mt19937_64& rng) const {
    const double u = unit_double(rng) * cumulative_.back();
    const auto bucket = std::min(static_cast<std::size_t>(u * bucket_scale_), guide_.size() - 1);
    std::size_t index = guide_[bucket];
    while (index < cumulative_.size() && cumulative_[index] <= u) ++index;  // upper_bound from the guide
    return std::min(index, last_positive_);  // u rounded up to the total lands past the end
  }

  std::size_t draw_excluding(std::mt19937_64& rng, const std::vector<char>& chosen) const {
    for (int attempt = 0; attempt < kMaxRejections; ++attempt) {
      const std::size_t expert = draw(rng);
      if (!chosen[expert]) return expert;
    }
    double remaining = 0;
    for (std::size_t e = 0; e < weights_.size(); ++e) remaining += chosen[e] ? 0.0 : weights_[e];
    double u = unit_double(rng) * remaining;
    std::size_t fallback = 0;
    for (std::size_t e = 0; e < weights_.size(); ++e) {
      if (chosen[e] || weights_[e] <= 0) continue;
      fallback = e;
      if (u < weights_[e]) return e;
      u -= weights_[e];
    }
    return fallback;
  }

  std::vector<double> weights_;
  std::vector<double> cumulative_;
  std::size_t last_positive_ = 0;
  double bucket_scale_ = 0;         ///< buckets per unit of cumulative weight
  std::vector<std::size_t> guide_;  ///< per bucket: where the search for a draw in it starts
};

Counts balanced_counts(int rank, std::int64_t tokens, int experts, int top_k) {
  const std::int64_t slots = tokens * top_k;
  const std::int64_t remainder = slots % experts;
  Counts counts(static_cast<std::size_t>(experts), slots / experts);
  const std::int64_t first = (std::int64_t{rank} * remainder) % experts;
  for (std::int64_t j = 0; j < remainder; ++j) ++counts[static_cast<std::size_t>((first + j) % experts)];
  return counts;
}

// Partial Fisher–Yates: the first top_k entries of a shuffled order are a uniform k-subset,
// whatever order the array was left in by the previous token.
Counts uniform_counts(std::mt19937_64& rng, std::int64_t tokens, int experts, int top_k) {
  const auto expert_count = static_cast<std::size_t>(experts);
  Counts counts(expert_count, 0);
  std::vector<std::size_t> order(expert_count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::int64_t token = 0; token < tokens; ++token) {
    for (std::size_t pick = 0; pick < static_cast<std::size_t>(top_k); ++pick) {
      std::swap(order[pick], order[pick + uniform_below(rng, expert_count - pick)]);
      ++counts[order[pick]];
    }
  }
  return counts;
}

// Zipf over a seed-determined ranking: the expert at popularity rank r gets weight 1/(r+1)^s.
std::vector<double> zipf_weights(double exponent, std::uint64_t seed, int experts) {
  std::vector<std::size_t> ranking(static_cast<std::size_t>(experts));
  std::iota(ranking.begin(), ranking.end(), std::size_t{0});
  std::mt19937_64 rng = make_stream(seed, kPopularityStream);
  for (std::size_t i = ranking.size(); i > 1; --i) std::swap(ranking[i - 1], ranking[uniform_below(rng, i)]);
  std::vector<double> weights(ranking.size());
  for (std::size_t r = 0; r < ranking.size(); ++r) {
    weights[ranking[r]] = 1.0 / std::pow(static_cast<double>(r + 1), exponent);
  }
  return weights;
}

std::vector<double> histogram_weights(const RoutingSpec& spec, int experts, int top_k) {
  if (spec.histogram.size() != static_cast<std::size_t>(experts)) {
    throw ConfigError(spec.histogram_file, "",
                      "has " + std::to_string(spec.histogram.size()) + " weights but the model has " +
                          std::to_string(experts) + " experts");
  }
  const auto positive =
      std::count_if(spec.histogram.begin(), spec.histogram.end(), [](double w) { return w > 0; });
  if (positive < top_k) {
    throw ConfigError(
        spec.histogram_file, "",
        "has " + std::to_string(positive) + " weights > 0, fewer than top_k = " + std::to_string(top_k));
  }
  return spec.histogram;
}

std::int64_t capacity_limit(double capacity_factor, std::int64_t tokens, int top_k, int ranks, int experts) {
  if (capacity_factor <= 0) return 0;
  const double expected = static_cast<double>(tokens) * top_k * ranks / experts;
  // Past 2^62 slots a capacity limits nothing (tokens x top_k x ranks is far smaller); the cap keeps the
  // conversion to an integer defined whatever the factor.
  const double capacity = std::min(capacity_factor * expected, 0x1p62);
  // Forgive rounding (1.1 × 10 = 11.000000000000002 must give 11, not 12).
  return std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(capacity - 1e-9 * std::max(1.0, capacity))));
}

// Shares `capacity` slots of one expert max-min fairly among the ranks' demands; returns the slots dropped.
std::int64_t share_capacity(std::vector<Counts>& counts, std::size_t expert, std::int64_t capacity) {
  std::int64_t demand = 0, largest = 0;
  for (const Counts& rank : counts) {
    demand += rank[expert];
    largest = std::max(largest, rank[expert]);
  }
  if (demand <= capacity) return 0;
  auto granted_at = [&](std::int64_t level) {
    std::int64_t sum = 0;
    for (const Counts& rank : counts) sum += std::min(rank[expert], level);
    return sum;
  };
  std::int64_t level = 0;  // the largest level whose grants fit in the capacity
  for (std::int64_t low = 0, high = largest; low <= high;) {
    const std::int64_t middle = low + (high - low) / 2;
    if (granted_at(middle) <= capacity) {
      level = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  std::int64_t leftover = capacity - granted_at(level);
  for (Counts& rank : counts) {
    const bool gets_one_more = rank[expert] > level && leftover > 0;
    rank[expert] = std::min(rank[expert], level) + (gets_one_more ? 1 : 0);
    if (gets_one_more) --leftover;
  }
  return demand - capacity;
}

void check_sizes(int ranks, std::int64_t tokens_per_rank, int experts, int top_k) {
  if (ranks < 1 || tokens_per_rank < 0 || experts < 1 || top_k < 1 || top_k > experts) {
    throw ScheduleError(
        "routing needs ranks >= 1, tokens >= 0 and 1 <= top_k <= experts (ranks = " + std::to_string(ranks) +
        ", tokens = " + std::to_string(tokens_per_rank) + ", experts = " + std::to_string(experts) +
        ", top_k = " + std::to_string(top_k) + ")");
  }
}

int experts_per_rank(const RoutingPlan& plan, int ep) {
  const std::size_t experts = plan.tokens_to_expert.empty() ? 0 : plan.tokens_to_expert.front().size();
  if (ep < 1 || experts % static_cast<std::size_t>(ep) != 0) {
    throw ScheduleError("EP = " + std::to_string(ep) + " must divide the " + std::to_string(experts) +
                        " experts");
  }
  return static_cast<int>(experts / static_cast<std::size_t>(ep));
}

RoutingSpec read_recorded(const std::string& file) {
  return {RoutingSpec::Kind::RECORDED, 0, {}, file, recorded_slots(read_json_file(file), file, "")};
}

Counts recorded_counts(const RoutingSpec& spec, int rank, std::int64_t tokens, int experts, int top_k) {
  const std::string file = spec.histogram_file.empty() ? "recorded routing" : spec.histogram_file;
  const auto& row = spec.recorded[static_cast<std::size_t>(rank)];
  if (row.size() != static_cast<std::size_t>(experts)) {
    throw ScheduleError(file + ": rank " + std::to_string(rank) + " has " + std::to_string(row.size()) +
                        " expert counts but the model has " + std::to_string(experts) + " experts");
  }
  const std::int64_t sum = std::accumulate(row.begin(), row.end(), std::int64_t{0});
  if (sum != tokens * top_k) {
    throw ScheduleError(file + ": rank " + std::to_string(rank) + " routes " + std::to_string(sum) +
                        " slots, expected tokens x top_k = " + std::to_string(tokens * top_k));
  }
  return row;
}

}  // namespace

std::vector<std::vector<std::int64_t>> recorded_slots(const nlohmann::json& value, const std::string& file,
                                                      const std::string& pointer) {
  if (!value.is_array() || value.empty()) {
    throw ConfigError(file, pointer,
                      "must be a non-empty JSON array with one array of per-expert slots per rank");
  }
  std::vector<std::vector<std::int64_t>> slots;
  for (std::size_t r = 0; r < value.size(); ++r) {
    const auto& row = value[r];
    const std::string at = pointer + "/" + std::to_string(r);
    if (!row.is_array()) throw ConfigError(file, at, "must be an array of per-expert slot counts");
    auto& counts = slots.emplace_back();
    for (std::size_t e = 0; e < row.size(); ++e) {
      const bool in_range = row[e].is_number_unsigned()
                                ? row[e].get<std::uint64_t>() <= kMaxRecordedSlots
                                : row[e].is_number_integer() && row[e].get<std::int64_t>() >= 0;
      if (!in_range) {
        throw ConfigError(file, at + "/" + std::to_string(e),
                          "= " + shown_value(row[e]) + ": must be an integer in [0, 2^32]");
      }
      counts.push_back(row[e].get<std::int64_t>());
    }
  }
  return slots;
}

RoutingSpec parse_routing(const std::string& text) {
  if (text == "balanced") return {RoutingSpec::Kind::BALANCED, 0, {}, "", {}};
  if (text == "uniform") return {RoutingSpec::Kind::UNIFORM, 0, {}, "", {}};
  const std::string zipf_prefix = "zipf:", histogram_prefix = "histogram:", recorded_prefix = "recorded:";
  if (text.rfind(zipf_prefix, 0) == 0) {
    double exponent = 0;
    const char* begin = text.data() + zipf_prefix.size();
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(begin, end, exponent);
    // Past S = 100 every expert but the most popular weighs below 1e-30 (2^-100): no skew a run could have.
    if (error != std::errc() || stop != end || !(exponent > 0 && exponent <= kMaxZipfExponent)) {
      routing_text_error(text, "the zipf exponent S must be a number in (0, 100]; ");
    }
    return {RoutingSpec::Kind::ZIPF, exponent, {}, "", {}};
  }
  if (text.rfind(histogram_prefix, 0) == 0 && text.size() > histogram_prefix.size()) {
    return read_histogram(text.substr(histogram_prefix.size()));
  }
  if (text.rfind(recorded_prefix, 0) == 0 && text.size() > recorded_prefix.size()) {
    return read_recorded(text.substr(recorded_prefix.size()));
  }
  routing_text_error(text, "");
}

RoutingPlan route_tokens(const RoutingSpec& spec, std::uint64_t seed, int ranks, std::int64_t tokens_per_rank,
                         int experts, int top_k, double capacity_factor) {
  check_sizes(ranks, tokens_per_rank, experts, top_k);
  MOE_CHECK(spec.kind != RoutingSpec::Kind::ZIPF || spec.zipf_s > 0) << "zipf exponent " << spec.zipf_s;
  std::vector<double> weights;
  if (spec.kind == RoutingSpec::Kind::ZIPF) weights = zipf_weights(spec.zipf_s, seed, experts);
  if (spec.kind == RoutingSpec::Kind::HISTOGRAM) weights = histogram_weights(spec, experts, top_k);
  if (spec.kind == RoutingSpec::Kind::RECORDED && spec.recorded.size() != static_cast<std::size_t>(ranks)) {
    throw ScheduleError(
        (spec.histogram_file.empty() ? std::string("recorded routing") : spec.histogram_file) + ": has " +
        std::to_string(spec.recorded.size()) + " source ranks, the run needs " + std::to_string(ranks));
  }
  const WeightedSampler sampler(weights.empty() ? std::vector<double>(static_cast<std::size_t>(experts), 1.0)
                                                : weights);

  RoutingPlan plan;
  std::vector<char> chosen(static_cast<std::size_t>(experts));
  for (int rank = 0; rank < ranks; ++rank) {
    std::mt19937_64 rng = make_stream(seed, static_cast<std::uint64_t>(rank) + 1);
    if (spec.kind == RoutingSpec::Kind::BALANCED) {
      plan.tokens_to_expert.push_back(balanced_counts(rank, tokens_per_rank, experts, top_k));
    } else if (spec.kind == RoutingSpec::Kind::RECORDED) {
      plan.tokens_to_expert.push_back(recorded_counts(spec, rank, tokens_per_rank, experts, top_k));
    } else if (spec.kind == RoutingSpec::Kind::UNIFORM) {
      plan.tokens_to_expert.push_back(uniform_counts(rng, tokens_per_rank, experts, top_k));
    } else {
      Counts counts(static_cast<std::size_t>(experts), 0);
      for (std::int64_t token = 0; token < tokens_per_rank; ++token)
        sampler.draw_token(rng, top_k, chosen, counts);
      plan.tokens_to_expert.push_back(std::move(counts));
    }
  }
  plan.capacity_per_expert = capacity_limit(capacity_factor, tokens_per_rank, top_k, ranks, experts);
  if (plan.capacity_per_expert > 0) {
    for (std::size_t e = 0; e < static_cast<std::size_t>(experts); ++e) {
      plan.dropped_slots += share_capacity(plan.tokens_to_expert, e, plan.capacity_per_expert);
    }
  }
  return plan;
}

std::vector<std::int64_t> expert_load(const RoutingPlan& plan) {
  std::vector<std::int64_t> load;
  for (const Counts& rank : plan.tokens_to_expert) {
    load.resize(std::max(load.size(), rank.size()), 0);
    for (std::size_t e = 0; e < rank.size(); ++e) load[e] += rank[e];
  }
  return load;
}

std::vector<std::int64_t> local_expert_load(const RoutingPlan& plan, int ep, int rank) {
  const int local = experts_per_rank(plan, ep);
  if (rank < 0 || rank >= ep) {
    throw ScheduleError("rank " + std::to_string(rank) + " is outside the EP group of " + std::to_string(ep));
  }
  const std::vector<std::int64_t> load = expert_load(plan);
  const auto first = load.begin() + static_cast<std::ptrdiff_t>(rank) * local;
  return {first, first + local};
}

std::vector<std::vector<double>> dispatch_bytes(const RoutingPlan& plan, int ep, double bytes_per_token) {
  const int local = experts_per_rank(plan, ep);
  if (plan.tokens_to_expert.size() != static_cast<std::size_t>(ep)) {
    throw ScheduleError("dispatch_bytes: the routing plan has " +
                        std::to_string(plan.tokens_to_expert.size()) +
                        " source ranks but EP = " + std::to_string(ep));
  }
  std::vector<std::vector<double>> bytes(static_cast<std::size_t>(ep),
                                         std::vector<double>(static_cast<std::size_t>(ep), 0.0));
  for (std::size_t src = 0; src < plan.tokens_to_expert.size(); ++src) {
    const Counts& slots = plan.tokens_to_expert[src];
    for (std::size_t e = 0; e < slots.size(); ++e) {
      bytes[src][e / static_cast<std::size_t>(local)] += static_cast<double>(slots[e]) * bytes_per_token;
    }
  }
  return bytes;
}

}  // namespace moesim::models
