// The SimGrid backend against the analytic engine on single-node scenarios of every schedule family: the
// two share the op lifecycle and the kernel contention model and differ only in who solves the network's
// max-min shares (and in how a ring's hops are represented), so on one node they must agree within 5%.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "moesim/schedules/ScenarioFlags.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

struct Case {
  std::string name;
  std::vector<std::pair<std::string, std::string>> flags;
};

SimulationResult simulate_with(const Case& c, const std::string& engine) {
  ScenarioFlags f;
  for (const auto& [flag, value] : c.flags) f.set(flag, value);
  f.set("engine", engine);
  return simulate(make_scenario(f));
}

double relative_gap(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(a), 1e-12);
}

}  // namespace

TEST(EngineAgreement, SingleNodeScenariosAgreeWithinFivePercent) {
  const std::vector<Case> cases = {
      {"regular, DeepSeek-V2-Lite, H100 (switch), train",
       {{"model", "deepseek-v2-lite"}, {"hw", "h100"}, {"ep", "8"}, {"layers", "4"}}},
      {"farskip, DeepSeek-V2-Lite, MI325X (xGMI mesh), train",
       {{"model", "deepseek-v2-lite"},
        {"hw", "mi325x"},
        {"ep", "8"},
        {"schedule", "farskip"},
        {"layers", "4"}}},
      {"regular, Qwen3-30B-A3B, Zipf routing, every rank simulated",
       {{"model", "qwen3-30b-a3b"},
        {"hw", "h100"},
        {"ep", "8"},
        {"routing", "zipf:1.1"},
        {"per-rank", "true"},
        {"layers", "4"}}},
      {"foldmoe 1a1m, Mixtral-8x7B, TP8 rings and all-to-alls, forward",
       {{"model", "mixtral-8x7b"},
        {"hw", "h100"},
        {"ep", "8"},
        {"tp", "8"},
        {"schedule", "1a1m"},
        {"phase", "forward"},
        {"degree", "2"},
        {"layers", "4"}}},
      {"flashmoe megakernel, DeepSeek-V2-Lite, one-sided transfers",
       {{"model", "deepseek-v2-lite"},
        {"hw", "h100"},
        {"ep", "8"},
        {"schedule", "megakernel"},
        {"phase", "forward"},
        {"layers", "1"}}},
      {"comet, copy-engine peer copies",
       {{"model", "deepseek-v2-lite"},
        {"hw", "h100"},
        {"ep", "8"},
        {"schedule", "comet"},
        {"phase", "forward"},
        {"layers", "1"}}},
      {"regular, copy-engine all-to-alls, H200 (calibrated)",
       {{"model", "qwen3-30b-a3b"},
        {"hw", "h200.calibrated"},
        {"ep", "4"},
        {"opt", "transport=copy_engine"},
        {"layers", "4"}}},
      {"prefill, all-reduce MoE, MI325X rings striped over the mesh",
       {{"model", "deepseek-v2-lite"},
        {"hw", "mi325x"},
        {"ep", "8"},
        {"tp", "8"},
        {"moe-comm", "allreduce"},
        {"phase", "prefill"},
        {"layers", "4"}}},
  };
  for (const Case& c : cases) {
    const SimulationResult analytic = simulate_with(c, "analytic");
    const SimulationResult simgrid = simulate_with(c, "simgrid");
    ASSERT_GT(analytic.step_ms, 0) << c.name;
    EXPECT_LE(relative_gap(analytic.step_ms, simgrid.step_ms), 0.05)
        << c.name << ": step " << analytic.step_ms << " ms (analytic) vs " << simgrid.step_ms
        << " ms (simgrid)";
    EXPECT_LE(relative_gap(analytic.comm_ms, simgrid.comm_ms), 0.05)
        << c.name << ": comm " << analytic.comm_ms << " ms (analytic) vs " << simgrid.comm_ms
        << " ms (simgrid)";
  }
}
