// Bounded work: scenarios past the documented limits are refused before they run (docs/limits.md).
#include <gtest/gtest.h>

#include <cstdlib>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

/** Sets an environment variable for one test's scope. */
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

Scenario small() {
  Scenario s;
  s.model = models::load_model("deepseek-v2-lite");
  s.hw = hw::load_profile("mi325x");
  s.parallel.ep = 8;
  s.workload.phase = Phase::FORWARD;
  s.workload.tokens = 1024;
  s.workload.seq_len = 1024;
  s.workload.layers = 2;
  return s;
}

std::string error_of(const Scenario& s) {
  try {
    simulate(s);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "<ran>";
}

}  // namespace

TEST(ScenarioSize, ProgramsStopGrowingAtTheOpLimit) {
  // A limit one op short of the program (and above the 8 the scenario alone promises: 2 layers x 4) is
  // hit while the program is built.
  const std::size_t ops = simulate(small()).program->ops().size();
  ASSERT_GT(ops, 9u);
  ScopedEnv limit("MOESIM_MAX_OPS", std::to_string(ops - 1).c_str());
  EXPECT_EQ(error_of(small()), "the scenario needs " + std::to_string(ops) +
                                   " engine ops or more, past the " + std::to_string(ops - 1) +
                                   " one simulation may hold (MOESIM_MAX_OPS, docs/limits.md): simulate "
                                   "fewer layers, ranks or tokens, or raise the limit");
}

TEST(ScenarioSize, AScenarioFarTooLargeIsRefusedBeforeItIsBuilt) {
  // Per rank, EP 8 x 2 layers x 4 ops at the least = 64 > 60: refused from the scenario alone.
  Scenario s = small();
  s.per_rank = true;
  ScopedEnv limit("MOESIM_MAX_OPS", "60");
  EXPECT_EQ(error_of(s).rfind("the scenario needs 64 engine ops or more, past the 60", 0), 0u) << error_of(s);
}

TEST(ScenarioSize, TheMegakernelCountsItsTilesFirst) {
  // One MoE layer, EP 8, 1024 tokens per rank: the tile tasks are counted from the routing plan and refused
  // before any is built (the program's own count would have stopped at the 1001st op).
  Scenario s = small();
  s.schedule = "megakernel";
  ScopedEnv limit("MOESIM_MAX_OPS", "1000");
  const std::string error = error_of(s);
  EXPECT_EQ(error.find("the scenario needs 1001 engine ops"), std::string::npos) << error;
  EXPECT_NE(error.find("engine ops or more, past the 1000 one simulation may hold"), std::string::npos)
      << error;
}

TEST(ScenarioSize, RepeatsCountAgainstTheOpRunLimit) {
  Scenario s = small();
  s.power_cap = false;
  const std::size_t ops = simulate(s).program->ops().size();
  // 50 x MOESIM_MAX_OPS op-runs: with the limit at the program's own size, 50 repeats fit and 51 do not.
  ScopedEnv limit("MOESIM_MAX_OPS", std::to_string(ops).c_str());
  s.noise.repeat = 50;
  EXPECT_EQ(error_of(s), "<ran>");
  s.noise.repeat = 51;
  EXPECT_NE(error_of(s).find("engine ops would run 51 times (--repeat 51), past"), std::string::npos)
      << error_of(s);
}

TEST(ScenarioSize, RoutingDrawsAreBoundedBeforeTheyStart) {
  // uniform: 8 ranks x 1024 tokens x top_k 6 = 49152 draws.
  Scenario s = small();
  s.workload.routing = models::parse_routing("uniform");
  ScopedEnv limit("MOESIM_MAX_DRAWS", "49151");
  EXPECT_EQ(error_of(s),
            "the routing would draw 49152 token-expert choices (8 ranks x 1024 tokens x top_k 6), more than "
            "49151 (MOESIM_MAX_DRAWS, docs/limits.md): fewer ranks or tokens, or --routing balanced");
  s.workload.routing = models::parse_routing("balanced");  // computed, not drawn
  EXPECT_EQ(error_of(s), "<ran>");
}

TEST(ScenarioSize, TrafficMatricesAreBoundedBeforeTheyAreBuilt) {
  // Estimate: 3 x ranks x experts x 8 B of routing, plus 2 layers x Dispatch and Combine x ranks^2 x 8 B.
  // EP 8, 64 experts: 12 KiB + 2 KiB. EP 65536, 65536 experts: 3 x 2^35 B = 96 GiB + 2^37 B = 128 GiB.
  Scenario s = small();
  EXPECT_EQ(error_of(s), "<ran>");
  s.model.moe.experts = 65536;
  s.parallel.ep = 65536;
  const std::string error = error_of(s);
  EXPECT_EQ(error.rfind("the scenario's routing and all-to-all matrices would take 224 GiB (65536 ranks, "
                        "65536 experts, 2 layers)",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("more than 16 GiB (MOESIM_MAX_MEMORY_GB"), std::string::npos) << error;
}
