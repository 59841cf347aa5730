#include "moesim/models/Routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <random>

#include "moesim/common/Error.hpp"

namespace moesim::models {
namespace {

const std::string kFixtures = MOESIM_MODELS_FIXTURES;
const std::string kAcceptedForms =
    "expected balanced, uniform, zipf:S (S > 0), histogram:FILE.json (a JSON array of per-expert weights) or "
    "recorded:FILE.json (one array of per-expert slots per rank)";

std::string routing_error(const std::string& text) {
  try {
    parse_routing(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::int64_t sum(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{0});
}

TEST(Routing, ParsesEveryForm) {
  EXPECT_EQ(parse_routing("balanced").kind, RoutingSpec::Kind::BALANCED);
  EXPECT_EQ(parse_routing("uniform").kind, RoutingSpec::Kind::UNIFORM);
  const RoutingSpec zipf = parse_routing("zipf:1.2");
  EXPECT_EQ(zipf.kind, RoutingSpec::Kind::ZIPF);
  EXPECT_DOUBLE_EQ(zipf.zipf_s, 1.2);
  const std::string file = kFixtures + "/histogram_skewed.json";
  const RoutingSpec histogram = parse_routing("histogram:" + file);
  EXPECT_EQ(histogram.kind, RoutingSpec::Kind::HISTOGRAM);
  EXPECT_EQ(histogram.histogram, (std::vector<double>{8, 4, 2, 1, 0, 1}));
  EXPECT_EQ(histogram.histogram_file, file);
}

TEST(Routing, BadTextListsTheAcceptedForms) {
  EXPECT_EQ(routing_error("skewed"), "<input>: --routing = \"skewed\": " + kAcceptedForms);
  EXPECT_EQ(routing_error("histogram:"), "<input>: --routing = \"histogram:\": " + kAcceptedForms);
  // 1e308 left every expert but one a weight of 0 (1/2^1e308); past 100 none has a weight above 2^-100.
  for (const char* bad_exponent :
       {"zipf:0", "zipf:-1", "zipf:x", "zipf:1.5x", "zipf:", "zipf:1e308", "zipf:nan"}) {
    EXPECT_EQ(routing_error(bad_exponent), "<input>: --routing = \"" + std::string(bad_exponent) +
                                               "\": the zipf exponent S must be a number in (0, 100]; " +
                                               kAcceptedForms);
  }
}

TEST(Routing, BadHistogramFilesNameTheFile) {
  const std::string entry = kFixtures + "/histogram_bad_entry.json";
  EXPECT_EQ(routing_error("histogram:" + entry), entry + ": /2 = \"three\": must be a number >= 0");
  const std::string object = kFixtures + "/histogram_not_array.json";
  EXPECT_EQ(routing_error("histogram:" + object),
            object + ": must be a JSON array of per-expert weights (numbers >= 0)");
  // A subnormal weight would make the sampler's buckets per unit weight infinite (found by libFuzzer).
  const std::string tiny = testing::TempDir() + "/histogram_subnormal.json";
  std::ofstream(tiny) << "[1, 551e-320]";
  EXPECT_EQ(routing_error("histogram:" + tiny),
            tiny + ": /1 = 5.51e-318: must be 0 or >= 1e-15 (weights are relative)");
  EXPECT_EQ(routing_error("histogram:/no/such/file.json"),
            "/no/such/file.json: cannot be opened for reading: No such file or directory");
  // 6 weights against a model of 8 experts.
  const RoutingSpec six = parse_routing("histogram:" + kFixtures + "/histogram_skewed.json");
  try {
    route_tokens(six, 1, 2, 16, 8, 2, 0);
    FAIL() << "histogram of the wrong length accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), six.histogram_file + ": has 6 weights but the model has 8 experts");
  }
}

TEST(Routing, RecordedRoutingIsUsedAsItIs) {
  const std::string file = kFixtures + "/recorded_2x4.json";  // [[3,1,0,4],[2,2,2,2]]: 4 tokens, top-2
  const RoutingSpec spec = parse_routing("recorded:" + file);
  ASSERT_EQ(spec.kind, RoutingSpec::Kind::RECORDED);
  const RoutingPlan plan = route_tokens(spec, 99, 2, 4, 4, 2, 0);
  EXPECT_EQ(plan.tokens_to_expert, (std::vector<std::vector<std::int64_t>>{{3, 1, 0, 4}, {2, 2, 2, 2}}));
  // Dispatch bytes follow the matrix: EP 2 puts experts {0,1} on rank 0 and {2,3} on rank 1.
  const auto bytes = dispatch_bytes(plan, 2, 10.0);
  EXPECT_EQ(bytes, (std::vector<std::vector<double>>{{40, 40}, {40, 40}}));
}

TEST(Routing, RecordedRoutingMustMatchTheRun) {
  const std::string file = kFixtures + "/recorded_2x4.json";
  const RoutingSpec spec = parse_routing("recorded:" + file);
  auto schedule_error = [&](int ranks, std::int64_t tokens, int experts) {
    try {
      route_tokens(spec, 1, ranks, tokens, experts, 2, 0);
    } catch (const ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(schedule_error(3, 4, 4), file + ": has 2 source ranks, the run needs 3");
  EXPECT_EQ(schedule_error(2, 4, 8), file + ": rank 0 has 4 expert counts but the model has 8 experts");
  EXPECT_EQ(schedule_error(2, 5, 4), file + ": rank 0 routes 8 slots, expected tokens x top_k = 10");
  const std::string bad = kFixtures + "/histogram_skewed.json";  // a flat array, not one row per rank
  EXPECT_EQ(routing_error("recorded:" + bad), bad + ": /0 must be an array of per-expert slot counts");
}

TEST(Routing, BalancedGivesExactlyEqualLoads) {
  // 1024 tokens · top-6 / 64 experts = 96 slots per (rank, expert); 4 ranks → 384 per expert.
  const RoutingPlan plan = route_tokens(parse_routing("balanced"), 7, 4, 1024, 64, 6, 0);
  for (const auto& rank : plan.tokens_to_expert) {
    EXPECT_EQ(rank, std::vector<std::int64_t>(64, 96));
  }
  EXPECT_EQ(expert_load(plan), std::vector<std::int64_t>(64, 384));
}

TEST(Routing, BalancedRemaindersRotateOverExperts) {
  // 10 tokens · 2 = 20 slots per rank over 8 experts: 2 each plus 4 extra; rank r's extras start at 4r mod 8.
  const RoutingPlan plan = route_tokens(parse_routing("balanced"), 7, 3, 10, 8, 2, 0);
  EXPECT_EQ(plan.tokens_to_expert[0], (std::vector<std::int64_t>{3, 3, 3, 3, 2, 2, 2, 2}));
  EXPECT_EQ(plan.tokens_to_expert[1], (std::vector<std::int64_t>{2, 2, 2, 2, 3, 3, 3, 3}));
  // Totals: 60 slots over 8 experts → 7 or 8 each.
  EXPECT_EQ(expert_load(plan), (std::vector<std::int64_t>{8, 8, 8, 8, 7, 7, 7, 7}));
}

TEST(Routing, RandomRoutingsConserveSlotsAndPickDistinctExperts) {
  for (const char* form : {"uniform", "zipf:1.2", "zipf:4"}) {
    SCOPED_TRACE(form);
    const RoutingPlan plan = route_tokens(parse_routing(form), 42, 8, 2048, 64, 6, 0);
    ASSERT_EQ(plan.tokens_to_expert.size(), 8u);
    for (const auto& rank : plan.tokens_to_expert) {
      EXPECT_EQ(sum(rank), 2048 * 6);
      // A token picks an expert at most once, so no expert gets more slots than a rank has tokens.
      EXPECT_LE(*std::max_element(rank.begin(), rank.end()), 2048);
    }
    EXPECT_EQ(sum(expert_load(plan)), 8 * 2048 * 6);
    EXPECT_EQ(plan.dropped_slots, 0);
  }
}

TEST(Routing, UniformIsNearlyEven) {
  // 8·4096·2 = 65,536 slots over 16 experts: mean 4096, standard deviation about sqrt(4096) = 64.
  const RoutingPlan plan = route_tokens(parse_routing("uniform"), 3, 8, 4096, 16, 2, 0);
  for (std::int64_t load : expert_load(plan)) EXPECT_NEAR(static_cast<double>(load), 4096.0, 6 * 64.0);
}

TEST(Routing, ZipfIsSkewedDeterministicAndSeedDependent) {
  const RoutingSpec zipf = parse_routing("zipf:1.2");
  const auto first = expert_load(route_tokens(zipf, 11, 4, 4096, 64, 2, 0));
  EXPECT_EQ(first, expert_load(route_tokens(zipf, 11, 4, 4096, 64, 2, 0)));
  EXPECT_NE(first, expert_load(route_tokens(zipf, 12, 4, 4096, 64, 2, 0)));
  // Mean load 4·4096·2/64 = 512. With s = 1.2 the most popular expert draws 1/H(64, 1.2) ≈ 29% of
  // first picks alone (1/3.42), several times the mean.
  const std::int64_t hottest = *std::max_element(first.begin(), first.end());
  const std::int64_t coldest = *std::min_element(first.begin(), first.end());
  EXPECT_GT(hottest, 4 * 512);
  EXPECT_LT(coldest, 512 / 2);
}

TEST(Routing, TheStandardFixesTheRandomEngine) {
  // [rand.predef]: the 10000th output of a default-constructed mt19937_64 is 9981545732273789042. The
  // routings rest on this engine and on the library's own sampling code only.
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(engine(), 9981545732273789042ULL);
}

TEST(Routing, CapacityCapsEveryExpert) {
  // zipf:2 over 16 experts, 4 ranks · 1024 tokens · top-2, capacity factor 1.0:
  //   C = ceil(1.0 · 1024·2·4 / 16) = 512 slots per expert.
  const RoutingPlan unlimited = route_tokens(parse_routing("zipf:2"), 5, 4, 1024, 16, 2, 0);
  const RoutingPlan capped = route_tokens(parse_routing("zipf:2"), 5, 4, 1024, 16, 2, 1.0);
  EXPECT_EQ(capped.capacity_per_expert, 512);
  const auto before = expert_load(unlimited);
  const auto after = expert_load(capped);
  std::int64_t expected_drops = 0;
  for (std::size_t e = 0; e < before.size(); ++e) {
    EXPECT_EQ(after[e], std::min<std::int64_t>(before[e], 512));
    expected_drops += before[e] - after[e];
  }
  EXPECT_GT(expected_drops, 0);
  EXPECT_EQ(capped.dropped_slots, expected_drops);
  EXPECT_EQ(sum(after) + capped.dropped_slots, 4 * 1024 * 2);
}

TEST(Routing, CapacityIsSharedFairlyAmongRanks) {
  // Every token wants expert 0 (weights 1, 0; top-1): 3 ranks × 10 tokens = 30 slots for expert 0.
  RoutingSpec one_hot{RoutingSpec::Kind::HISTOGRAM, 0, {1, 0}, "one-hot", {}};
  // Capacity factor 1.0: C = ceil(10·1·3/2) = 15 → 5 per rank, 15 dropped.
  const RoutingPlan even = route_tokens(one_hot, 1, 3, 10, 2, 1, 1.0);
  for (const auto& rank : even.tokens_to_expert) EXPECT_EQ(rank, (std::vector<std::int64_t>{5, 0}));
  EXPECT_EQ(even.dropped_slots, 15);
  // Capacity factor 0.7: C = ceil(0.7·15) = 11 → level 3 each (9), the 2 left go to ranks 0 and 1.
  const RoutingPlan tight = route_tokens(one_hot, 1, 3, 10, 2, 1, 0.7);
  EXPECT_EQ(tight.tokens_to_expert[0][0], 4);
  EXPECT_EQ(tight.tokens_to_expert[1][0], 4);
  EXPECT_EQ(tight.tokens_to_expert[2][0], 3);
  EXPECT_EQ(tight.dropped_slots, 19);
}

TEST(Routing, CapacityForgivesFloatingPointRounding) {
  // 1.1 · 10 is 11.000000000000002 in binary floating point; the capacity is still 11.
  const RoutingPlan plan = route_tokens(parse_routing("balanced"), 1, 1, 10, 1, 1, 1.1);
  EXPECT_EQ(plan.capacity_per_expert, 11);
  EXPECT_EQ(plan.dropped_slots, 0);
}

TEST(Routing, DispatchBytesRowsSumToTheRanksSlots) {
  // Balanced, 4 ranks · 16 tokens · top-2 over 8 experts: 4 slots per (rank, expert); EP 4 places
  // experts {0,1} on rank 0, {2,3} on rank 1... → 8 slots per (src, dst) pair.
  const RoutingPlan balanced = route_tokens(parse_routing("balanced"), 1, 4, 16, 8, 2, 0);
  const auto matrix = dispatch_bytes(balanced, 4, 1000.0);
  for (const auto& row : matrix) EXPECT_EQ(row, std::vector<double>(4, 8000.0));
  EXPECT_EQ(local_expert_load(balanced, 4, 2), (std::vector<std::int64_t>{16, 16}));

  const double bytes_per_token = 7168 * 2;
  const RoutingPlan skewed = route_tokens(parse_routing("zipf:1.2"), 9, 8, 512, 64, 8, 1.25);
  const auto skewed_matrix = dispatch_bytes(skewed, 8, bytes_per_token);
  for (std::size_t src = 0; src < 8; ++src) {
    const double row = std::accumulate(skewed_matrix[src].begin(), skewed_matrix[src].end(), 0.0);
    EXPECT_DOUBLE_EQ(row, static_cast<double>(sum(skewed.tokens_to_expert[src])) * bytes_per_token);
  }
}

TEST(Routing, ImpossibleSizesAreScheduleErrors) {
  const RoutingSpec uniform = parse_routing("uniform");
  EXPECT_THROW(route_tokens(uniform, 1, 4, 16, 8, 9, 0), ScheduleError);
  EXPECT_THROW(route_tokens(uniform, 1, 0, 16, 8, 2, 0), ScheduleError);
  const RoutingPlan plan = route_tokens(uniform, 1, 4, 16, 8, 2, 0);
  EXPECT_THROW(dispatch_bytes(plan, 3, 1.0), ScheduleError);
  EXPECT_THROW(dispatch_bytes(plan, 2, 1.0), ScheduleError);  // 4 source ranks, EP 2
  EXPECT_THROW(local_expert_load(plan, 4, 4), ScheduleError);
}

TEST(Routing, DrawsStayThoseOfAPlainInverseCdfSearch) {
  // The sampler finds each draw's expert through a guide table instead of a binary search over the
  // cumulative weights; both must pick the same expert for every draw. These FNV-1a hashes of the slot
  // matrices are what the binary-search sampler (moesim 7fc187f) produced for these seeds.
  auto fingerprint = [](const RoutingPlan& plan) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const auto& row : plan.tokens_to_expert) {
      for (std::int64_t slots : row) hash = (hash ^ static_cast<std::uint64_t>(slots)) * 1099511628211ULL;
    }
    return hash;
  };
  EXPECT_EQ(fingerprint(route_tokens(parse_routing("zipf:1.1"), 1, 4, 512, 64, 6, 0)),
            7105786754177282915ULL);
  EXPECT_EQ(fingerprint(route_tokens(parse_routing("zipf:2.5"), 9, 3, 777, 256, 8, 0)),
            6958287540386479013ULL);
  EXPECT_EQ(fingerprint(route_tokens(parse_routing("uniform"), 3, 2, 300, 7, 3, 0)), 10982397418451037265ULL);
}

}  // namespace
}  // namespace moesim::models
