// A forward that records autograd and runs no backward ends by freeing its graph. The reference stacks'
// forward records measure that free as the host time after their forward returned (issue_ms -
// forward_issue_ms); the shipped profiles charge it from a microbenchmark (kernels/tools/torch_graph_free.py:
// 0.96 us per node on a GPU host, 0.4-1.7 over its cases), each forward launch taken as a node. Nothing here
// was fitted to these records.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "moesim/common/Statistics.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/schedules/Simulation.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate {
namespace {

const std::string kData = std::string(MOESIM_TEST_DATA_DIR) + "/data/torch-stacks";

// The free each forward record's step is predicted to end with (the shipped profile of its style, on its
// GPU), over the host time after its forward returned, EP 1 records of every lease that says when the forward
// returned; and that time per forward launch in host probes, where the record has its probe.
TEST(GraphFree, TheFreeAfterAForwardIsTheMicrobenchmarksPerNodeCost) {
  const hw::HwProfile h100 = hw::load_profile("h100"), h200 = hw::load_profile("h200");
  std::map<std::string, std::vector<double>> ratios, probes_per_launch;  // by style
  for (const auto& r : find_torch_stack_records({kData})) {
    if (r.phase != "forward" || r.forward_issue_ms_p50 <= 0 || r.status != "ok" || r.ep != 1) continue;
    const double after_forward_ms = r.issue_ms_p50 - r.forward_issue_ms_p50;
    const std::string shipped = r.style == "loop" ? "eager" : r.style;
    auto impl = std::make_shared<const cost::ImplementationProfile>(cost::load_implementation(shipped));
    const bool hopper100 = r.device.find("H100") != std::string::npos;
    const schedules::SimulationResult result =
        schedules::simulate(torch_stack_scenario(r, hopper100 ? h100 : h200, impl));
    double free_ms = 0;
    int launches = 0;
    for (const auto& op : result.program->ops()) {
      if (op.rank != 0) continue;
      if (op.name.ends_with("autograd_graph_free")) free_ms += op.host_ns / 1e6;
      launches += op.kind == sim::OpKind::KERNEL && !op.origin.backward;
    }
    ASSERT_GT(free_ms, 0) << r.name;
    ratios[r.style].push_back(free_ms / after_forward_ms);
    if (r.host_probe_us_rank0 > 0)
      probes_per_launch[r.style].push_back(after_forward_ms * 1e3 / launches / r.host_probe_us_rank0);
  }
  // The microbenchmark's cases free 0.05-0.21 host probes per node, nodes as many as launches in its loop
  // over experts (data/calibration/2026-11-29-nvidia-h200-graph-free, -graph-free-loop): the records' time
  // after the forward, per launch, lies in that range where the free is what that time holds.
  constexpr double kLow = 0.047, kHigh = 0.21;
  ASSERT_EQ(ratios.size(), 4u);
  for (const auto& [style, v] : ratios) {
    ASSERT_GE(v.size(), 20u) << style;
    const auto& p = probes_per_launch[style];
    ASSERT_GE(p.size(), 10u) << style;
    const auto [v_min, v_max] = std::minmax_element(v.begin(), v.end());
    const auto [p_min, p_max] = std::minmax_element(p.begin(), p.end());
    std::cout << fmt::format(
        "{:14s} {} records: predicted / measured median {:.2f} ({:.2f}-{:.2f}); "
        "{} with a probe: {:.3f} probes per forward launch ({:.3f}-{:.3f})\n",
        style, v.size(), median(v), *v_min, *v_max, p.size(), median(p), *p_min, *p_max);
    EXPECT_GT(median(p), kLow) << style;
    EXPECT_LT(median(p), kHigh) << style;
  }
}

}  // namespace
}  // namespace moesim::validate
