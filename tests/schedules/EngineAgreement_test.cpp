// The SimGrid backend against the analytic engine: the two share the op lifecycle and the kernel
// contention model and differ only in who solves the network's max-min shares (and in how a ring's hops
// are represented), so on one node they must agree within 5% on every schedule family, and across nodes
// where the switch fabric binds.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
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

// Across an oversubscribed fat tree both engines route every flow that leaves a leaf through the leaf's
// uplink. Qwen3-30B-A3B at EP16 over 2 nodes, each node its own leaf (radix 12, 5:1: 10 NIC ports, one
// node of 8); balanced routing sends half of each rank's 4096 x 8 x 2048 x 2 B dispatch to the other node:
// 8 ranks x 67,108,864 B = 536.9 MB per all-to-all through an uplink of 8 x 48.5 GB/s / 5 = 77.6 GB/s,
// 6.92 ms. Two layers of training run 8 all-to-alls one after the other (no overlap in `regular`): the
// step is at least 55.35 ms, and the uplink, not the NICs, sets the all-to-all time.
TEST(EngineAgreement, AnOversubscribedUplinkBindsBothEnginesAlike) {
  const auto cluster = std::filesystem::temp_directory_path() / "moesim-engine-agreement-5to1.json";
  {
    std::ofstream out(cluster);
    out << R"({"schema_version": 1, "name": "two-leaves-5to1", "nodes": 2, "gpus_per_node": 8,
      "nics_per_gpu": 1, "nic_gbps": 400, "hop_latency_us": 0.5,
      "topology": {"type": "fat_tree", "levels": 2, "radix": 12, "oversubscription": 5}})";
  }
  const Case c{"regular, Qwen3-30B-A3B, EP16 over 2 nodes on a 5:1 fat tree",
               {{"model", "qwen3-30b-a3b"},
                {"hw", "h100"},
                {"ep", "16"},
                {"nodes", "2"},
                {"layers", "2"},
                {"cluster", cluster.string()}}};
  const double uplink_bound_ms = 8 * (8 * 4096.0 * 8 * 2048 * 2 / 2) / (8 * 48.5e9 / 5) * 1e3;
  for (const std::string engine : {"analytic", "simgrid"}) {
    const SimulationResult r = simulate_with(c, engine);
    EXPECT_GE(r.comm_ms, uplink_bound_ms) << engine;
    EXPECT_LE(r.comm_ms, 1.05 * uplink_bound_ms) << engine << ": the uplink should bind, not the NICs";
  }
  const SimulationResult analytic = simulate_with(c, "analytic"), simgrid = simulate_with(c, "simgrid");
  EXPECT_LE(relative_gap(analytic.step_ms, simgrid.step_ms), 0.05)
      << "step " << analytic.step_ms << " ms (analytic) vs " << simgrid.step_ms << " ms (simgrid)";
  std::filesystem::remove(cluster);
}
