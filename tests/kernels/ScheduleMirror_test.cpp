// The layer runner's op order (kernels/layer/Schedule.cpp) against the simulator's DAG for the same
// scenario: what validate --measured compares is only meaningful if both run the same program.
//
// Both sides are rendered in the runner's vocabulary, one entry per sub-block op in issue order:
//   "L0.ATTN_QKV"         a compute op (the simulator's consecutive kernels of one op of one layer)
//   "L0.dispatch"         a collective launched on the comm stream
//   "wait L0.dispatch"    the compute stream waits for it (simulator: the first compute kernel that
//                         depends on the collective; later dependencies on it are implied by stream order)
//   "L0.host_sync"        the host waits for the split sizes (Megatron's all-to-all dispatcher)
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "Schedule.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace moesim {
namespace {

namespace runner = kernels::layer;

struct Case {
  runner::MoeComm comm;
  runner::ScheduleKind kind;
  bool sync_splits;
};

std::string name_of(const Case& c) {
  return std::string(c.comm == runner::MoeComm::ALLTOALL ? "alltoall_" : "allreduce_") +
         runner::to_string(c.kind) + (c.sync_splits ? "_sync_splits" : "");
}

// Test names must not depend on the struct's padding bytes.
void PrintTo(const Case& c, std::ostream* out) {
  *out << name_of(c);
}

// The scenario validate --measured builds for a runner record (schedules/src/Measured.cpp
// measured_scenario), on a model whose every layer is MoE with a shared expert, so every op of the
// runner's layer launches kernels in the simulator too.
schedules::Scenario scenario_for(const Case& c, int layers) {
  schedules::Scenario s;
  s.model = models::load_model("llama4-scout");
  s.hw = hw::load_profile("h100");
  const bool allreduce = c.comm == runner::MoeComm::ALLREDUCE;
  s.parallel.ep = 2;
  s.parallel.tp = allreduce ? 2 : 1;
  s.parallel.nodes = 1;
  s.parallel.moe_comm = allreduce ? schedules::MoeComm::ALLREDUCE : schedules::MoeComm::ALLTOALL;
  s.workload.phase = allreduce ? schedules::Phase::PREFILL : schedules::Phase::FORWARD;
  s.workload.tokens = 256;
  s.workload.seq_len = 256;
  s.workload.layers = layers;
  s.workload.attention = hw::AttentionImpl::UNFUSED;  // the runner's only attention
  s.workload.expert_loop = true;                      // the runner's default experts
  s.options["sync_splits"] = c.sync_splits ? "on" : "off";
  if (c.kind == runner::ScheduleKind::REGULAR) {
    s.schedule = "regular";
    s.options["shared_overlap"] = "off";  // the runner's regular waits for every collective at once
  } else {
    s.schedule = "farskip";
  }
  return s;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::toupper(ch); });
  return text;
}

std::string layer_prefix(const sim::Op& op) {
  return "L" + std::to_string(op.origin.layer) + ".";
}

// Rank 0's forward ops in host order, in the runner's vocabulary (compute blocks are the simulator's
// LayerOp names, "attn_qkv"; collectives "dispatch"; the host sync "split_sizes_to_host").
std::vector<std::string> simulated_steps(const sim::Program& program) {
  std::vector<std::string> steps;
  std::set<sim::OpId> collectives, waited;
  std::string last_compute;
  for (std::size_t id = 0; id < program.ops().size(); ++id) {
    const sim::Op& op = program.ops()[id];
    if (op.rank != 0) continue;
    EXPECT_FALSE(op.origin.backward) << op.name;
    if (op.kind == sim::OpKind::COLLECTIVE) {
      steps.push_back(layer_prefix(op) + op.origin.block);
      collectives.insert(static_cast<sim::OpId>(id));
      last_compute.clear();
    } else if (op.kind == sim::OpKind::HOST) {
      EXPECT_EQ(op.origin.block, "split_sizes_to_host") << op.name;
      steps.push_back(layer_prefix(op) + "host_sync");
      last_compute.clear();
    } else if (op.kind == sim::OpKind::KERNEL) {
      for (sim::OpId dep : op.deps) {
        if (collectives.count(dep) != 0 && waited.insert(dep).second) {
          steps.push_back("wait " + layer_prefix(program.op(dep)) + program.op(dep).origin.block);
          last_compute.clear();
        }
      }
      const std::string name = layer_prefix(op) + upper(op.origin.block);
      if (name != last_compute) steps.push_back(name);
      last_compute = name;
    } else {
      ADD_FAILURE() << "unexpected op kind in " << op.name;
    }
  }
  return steps;
}

std::vector<std::string> runner_steps(const Case& c, int layers) {
  std::vector<std::string> steps;
  for (const runner::Step& step : runner::forward_steps(c.comm, c.kind, layers, c.sync_splits))
    steps.push_back(runner::to_string(step));
  return steps;
}

std::string joined(const std::vector<std::string>& steps) {
  std::string text;
  for (const std::string& step : steps) text += step + "\n";
  return text;
}

class ScheduleMirrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScheduleMirrorTest, RunnerIssuesTheSimulatorsOpsInItsOrder) {
  constexpr int kLayers = 3;  // a first, a middle and a last layer: FarSkip defers work across each boundary
  const schedules::SimulationResult result = schedules::simulate(scenario_for(GetParam(), kLayers));
  const std::vector<std::string> simulated = simulated_steps(*result.program);
  ASSERT_FALSE(simulated.empty());
  EXPECT_EQ(joined(runner_steps(GetParam(), kLayers)), joined(simulated));
}

INSTANTIATE_TEST_SUITE_P(
    Forward, ScheduleMirrorTest,
    ::testing::Values(Case{runner::MoeComm::ALLTOALL, runner::ScheduleKind::REGULAR, true},
                      Case{runner::MoeComm::ALLTOALL, runner::ScheduleKind::REGULAR, false},
                      Case{runner::MoeComm::ALLTOALL, runner::ScheduleKind::FARSKIP, true},
                      Case{runner::MoeComm::ALLTOALL, runner::ScheduleKind::FARSKIP, false},
                      Case{runner::MoeComm::ALLREDUCE, runner::ScheduleKind::REGULAR, false},
                      Case{runner::MoeComm::ALLREDUCE, runner::ScheduleKind::FARSKIP, false}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return name_of(param_info.param); });

}  // namespace
}  // namespace moesim
