#include "MaxMinSystem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "moesim/common/Error.hpp"

using moesim::sim::detail::MaxMinSystem;

TEST(MaxMinSystem, TextbookExampleThenTheBottleneckFlowLeaves) {
  // Links A (cap 10) and B (cap 4). Flow 0 crosses A and B, flow 1 only A, flow 2 only B.
  // B is the bottleneck: flows 0 and 2 get 2 each; flow 1 gets the rest of A: 10 - 2 = 8.
  MaxMinSystem system;
  const int a = system.add_resource(10, 0), b = system.add_resource(4, 1);
  const int f0 = system.add_flow({a, b}), f1 = system.add_flow({a}), f2 = system.add_flow({b});
  EXPECT_EQ(system.solve().size(), 3u);  // every new flow is reported
  EXPECT_DOUBLE_EQ(system.rate(f0), 2);
  EXPECT_DOUBLE_EQ(system.rate(f1), 8);
  EXPECT_DOUBLE_EQ(system.rate(f2), 2);
  // Without flow 2, B lets flow 0 rise to 4; A is then the limit: 5 each.
  system.remove_flow(f2);
  const std::vector<int> changed = system.solve();
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_DOUBLE_EQ(system.rate(f0), 4);
  EXPECT_DOUBLE_EQ(system.rate(f1), 6);
}

TEST(MaxMinSystem, RaisingAnUnfilledCapacityChangesNothing) {
  // One link of 6 shared by two flows (3 each); a second link of 100 that flow 0 also crosses
  // never fills, so raising it to 200 leaves both rates alone and reports no change.
  MaxMinSystem system;
  const int shared = system.add_resource(6, 0), wide = system.add_resource(100, 1);
  const int f0 = system.add_flow({shared, wide});
  system.add_flow({shared});
  system.solve();
  system.set_capacity(wide, 200);
  EXPECT_TRUE(system.solve().empty());
  EXPECT_DOUBLE_EQ(system.rate(f0), 3);
  // Lowering it to 2 makes it the bottleneck of flow 0: 2, and the other flow takes 6 - 2 = 4.
  system.set_capacity(wide, 2);
  EXPECT_EQ(system.solve().size(), 2u);
  EXPECT_DOUBLE_EQ(system.rate(f0), 2);
}

TEST(MaxMinSystem, FlowOverNothingIsUnlimited) {
  MaxMinSystem system;
  const int f = system.add_flow({});
  EXPECT_EQ(system.solve().size(), 1u);
  EXPECT_EQ(system.rate(f), MaxMinSystem::kUnlimited);
}

namespace {

// Random rounds of changes, each solved incrementally and compared bit for bit with a full
// max_min_rates() over every live flow. Capacities come from a short list so that many resources
// fill at exactly the same level (ties resolve by order, then by flow creation), plus random ones.
class RandomRounds {
 public:
  RandomRounds(std::uint64_t seed, int resources, std::size_t scan_limit)
      : rng_(seed), system_(MaxMinSystem::Mode::INCREMENTAL, scan_limit) {
    for (int r = 0; r < resources; ++r) add_resource();
  }

  void round() {
    const int changes = pick(1, 6);
    for (int c = 0; c < changes; ++c) {
      switch (pick(0, 9)) {
        case 0:
        case 1:
        case 2:
          add_flows(pick(1, 6));
          break;
        case 3:
        case 4:
        case 5:
        case 6:
          for (int k = pick(1, 3); k > 0; --k) remove_flow();
          break;
        case 7:
        case 8:
          change_capacity();
          break;
        default:
          churn_resource();
          break;
      }
    }
    const std::vector<int>& changed = system_.solve();
    const std::vector<int> live = system_.live_flows();
    const std::vector<double> reference = system_.rates_from_scratch();
    ASSERT_EQ(live.size(), reference.size());
    for (std::size_t i = 0; i < live.size(); ++i) {
      ASSERT_EQ(system_.rate(live[i]), reference[i]) << "flow " << live[i] << " of " << live.size();
    }
    // Every flow whose rate moved is reported, and every new one.
    for (int f : live) {
      const bool reported = std::find(changed.begin(), changed.end(), f) != changed.end();
      const auto old = before_.find(f);
      if (old == before_.end() || old->second != system_.rate(f)) {
        ASSERT_TRUE(reported) << "flow " << f << " changed silently";
      }
    }
    before_.clear();
    for (int f : live) before_[f] = system_.rate(f);
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  double capacity() {
    static const double kTied[] = {1, 2, 3, 4.5, 10, 0.1, 7};
    if (pick(0, 3) == 0) return std::uniform_real_distribution<double>(0.01, 20)(rng_);
    return kTied[pick(0, 6)];
  }

  void add_resource() {
    // Orders are unique, random and unrelated to the ids the system hands out.
    resources_.push_back(
        system_.add_resource(capacity(), next_order_ += static_cast<std::uint64_t>(pick(1, 50))));
  }

  void add_flows(int count) {
    for (int i = 0; i < count && !resources_.empty(); ++i) {
      std::vector<int> crossed;
      const int hops = pick(1, 4);
      for (int h = 0; h < hops; ++h)
        crossed.push_back(
            resources_[static_cast<std::size_t>(pick(0, static_cast<int>(resources_.size()) - 1))]);
      flows_.push_back(system_.add_flow(crossed));  // repeats allowed: they count twice
      uses_.push_back(crossed);
    }
  }

  void remove_flow() {
    if (flows_.empty()) return;
    const auto i = static_cast<std::size_t>(pick(0, static_cast<int>(flows_.size()) - 1));
    system_.remove_flow(flows_[i]);
    flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(i));
    uses_.erase(uses_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void change_capacity() {
    const int r = resources_[static_cast<std::size_t>(pick(0, static_cast<int>(resources_.size()) - 1))];
    system_.set_capacity(r, pick(0, 1) ? capacity() : system_.capacity(r) * (pick(0, 1) ? 0.5 : 1.5));
  }

  // Removes a resource no flow uses and adds a fresh one.
  void churn_resource() {
    for (std::size_t i = 0; i < resources_.size(); ++i) {
      const int r = resources_[i];
      const bool used = std::any_of(uses_.begin(), uses_.end(), [&](const std::vector<int>& u) {
        return std::find(u.begin(), u.end(), r) != u.end();
      });
      if (used) continue;
      system_.remove_resource(r);
      resources_.erase(resources_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
    add_resource();
  }

  std::mt19937_64 rng_;
  MaxMinSystem system_;
  std::vector<int> resources_, flows_;
  std::vector<std::vector<int>> uses_;
  std::map<int, double> before_;
  std::uint64_t next_order_ = 0;
};

}  // namespace

TEST(MaxMinSystem, RandomChangesGiveTheFullSolvesRatesBitForBit) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    // Odd seeds find each pop by a scan, even ones from a heap.
    RandomRounds rounds(seed, 3 + static_cast<int>(seed % 12), seed % 2 ? MaxMinSystem::kScanLimit : 0);
    for (int round = 0; round < 150; ++round) {
      rounds.round();
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "seed " << seed << " round " << round;
        return;
      }
    }
  }
}

TEST(MaxMinSystem, CheckedModeAgreesOnAnAllToAll) {
  // An 8-rank all-to-all over per-rank egress and ingress ports (all capacity 1) and a shared
  // link: flows leave in order of size, as the engine removes them, every solve checked.
  MaxMinSystem system(MaxMinSystem::Mode::CHECKED);
  constexpr int n = 8;
  std::vector<int> egress, ingress;
  for (int i = 0; i < n; ++i) egress.push_back(system.add_resource(1, static_cast<std::uint64_t>(i)));
  for (int i = 0; i < n; ++i) ingress.push_back(system.add_resource(1, static_cast<std::uint64_t>(n + i)));
  const int trunk = system.add_resource(5, 2 * n);
  std::vector<int> flows;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      std::vector<int> crossed{egress[static_cast<std::size_t>(i)], ingress[static_cast<std::size_t>(j)]};
      if ((i < n / 2) != (j < n / 2)) crossed.push_back(trunk);
      flows.push_back(system.add_flow(crossed));
    }
  }
  EXPECT_NO_THROW(system.solve());
  // Every port carries 7 flows: 1/7 each, unless the trunk (5 over 32 crossing flows) is lower: it is not.
  EXPECT_DOUBLE_EQ(system.rate(flows.front()), 1.0 / 7);
  std::mt19937_64 rng(7);
  std::shuffle(flows.begin(), flows.end(), rng);
  for (int f : flows) {
    system.remove_flow(f);
    EXPECT_NO_THROW(system.solve());
  }
}
