// The power-cap governor on programs whose capped speed has a closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "SimFixtures.hpp"
#include "moesim/sim/Power.hpp"

using namespace moesim::sim;
using namespace moesim::sim::testing;

namespace {

// 100 W idle, 1000 W of tensor work at peak and full speed, power ∝ speed² (γ = 2).
PowerModel square_law(double limit_w) {
  PowerModel model;
  model.limit_w = limit_w;
  model.idle_w = 100;
  model.compute_w_at_peak = 1000;
  model.speed_exponent = 2;
  return model;
}

KernelWork peak_gemm(double ns) {
  KernelWork work = compute(ns);
  work.peak_ns = ns;  // runs at the dense peak
  return work;
}

// One rank, one stream, one 1 ms kernel at the dense peak.
Program one_peak_gemm() {
  Program p(1, false);
  p.set_streams(0, {"compute"});
  p.add_kernel(0, 0, "gemm", "gemm", peak_gemm(1e6), 1);
  return p;
}

}  // namespace

TEST(Power, ComputeBoundKernelSlowsUntilItsPowerIsTheLimit) {
  // Alone for 1 ms at speed v: P = 100 + 1000·v² (energy 1 J·v over 1 ms / v). At a 600 W limit
  // v = sqrt(0.5), and the kernel takes 1 ms / v = 1.41421 ms.
  const Program p = one_peak_gemm();
  PowerOutcome outcome;
  RunResult r = run_power_capped(test_platform(), p, {}, square_law(600), outcome);
  EXPECT_TRUE(outcome.converged);
  EXPECT_NEAR(outcome.speed[0], std::sqrt(0.5), 1e-3);
  EXPECT_NEAR(static_cast<double>(r.makespan_ns), 1e6 / std::sqrt(0.5), 2e3);
  EXPECT_NEAR(outcome.mean_power_w[0], 600, 2);
  EXPECT_NEAR(outcome.uncapped_power_w[0], 1100, 1);
}

TEST(Power, IdleGapsLetTheClockStayHigher) {
  // A 1 ms host op (GPU idle), then the same kernel: P = 100 + 1000·v² / (1 + v) over 1 ms + 1 ms / v.
  // At 500 W: v² − 0.4·v − 0.4 = 0, v = (0.4 + sqrt(1.76)) / 2 = 0.86332; without the gap v = sqrt(0.4).
  Program gapped(1, false);
  gapped.set_streams(0, {"compute"});
  OpId wait = gapped.add_host_op(0, "wait", "host", 1e6);
  gapped.add_kernel(0, 0, "gemm", "gemm", peak_gemm(1e6), 0, {wait});
  PowerOutcome with_gap;
  run_power_capped(test_platform(), gapped, {}, square_law(500), with_gap);
  EXPECT_NEAR(with_gap.speed[0], (0.4 + std::sqrt(1.76)) / 2, 2e-3);

  const Program dense = one_peak_gemm();
  PowerOutcome without_gap;
  run_power_capped(test_platform(), dense, {}, square_law(500), without_gap);
  EXPECT_NEAR(without_gap.speed[0], std::sqrt(0.4), 2e-3);
}

TEST(Power, UnderTheLimitNothingChangesAndOneRunSuffices) {
  const Program p = one_peak_gemm();
  PowerOutcome outcome;
  RunResult capped = run_power_capped(test_platform(), p, {}, square_law(1200), outcome);
  EXPECT_EQ(outcome.runs, 1);
  EXPECT_DOUBLE_EQ(outcome.speed[0], 1.0);
  EXPECT_EQ(capped.makespan_ns, run(test_platform(), p).makespan_ns);
}

TEST(Power, LowerSpeedStretchesComputeButNotMemoryTime) {
  Program p(1, false);
  p.set_streams(0, {"compute"});
  OpId gemm = p.add_kernel(0, 0, "gemm", "gemm", compute(1000), 1);
  OpId copy = p.add_kernel(0, 0, "copy", "memory", memory(1000), 1);
  Platform platform = test_platform();
  platform.compute_speed = {0.5};
  RunResult r = run(platform, p);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(gemm)].end - r.ops[static_cast<std::size_t>(gemm)].start, 2000);
  EXPECT_EQ(r.ops[static_cast<std::size_t>(copy)].end - r.ops[static_cast<std::size_t>(copy)].start, 1000);
}

TEST(Power, CollectiveBytesCountOnBothSidesOfTheWire) {
  // Rank 0 sends 300 bytes to rank 1 and receives 100: 400 bytes through its HBM and its fabric port.
  Program p(2, false);
  for (int r = 0; r < 2; ++r) p.set_streams(r, {"comm"});
  CollectiveSpec spec;
  spec.name = "a2a";
  spec.group = {0, 1};
  spec.pair_bytes = {{0, 300}, {100, 0}};
  const int c = p.add_collective(spec);
  for (int r = 0; r < 2; ++r) p.add_collective_member(c, r, 0, "dispatch", 1);
  PowerModel model = square_law(600);
  model.hbm_j_per_byte = 1e-3;
  model.link_j_per_byte = 2e-3;
  const std::vector<RankEnergy> energy = rank_energy(p, model);
  EXPECT_DOUBLE_EQ(energy[0].bytes_sent, 300);
  EXPECT_DOUBLE_EQ(energy[0].bytes_received, 100);
  EXPECT_DOUBLE_EQ(energy[0].hbm_j, 0.4);
  EXPECT_DOUBLE_EQ(energy[0].link_j, 0.8);
  EXPECT_DOUBLE_EQ(energy[1].bytes_sent, 100);
}

TEST(Power, RejectsALimitBelowIdle) {
  const Program p = one_peak_gemm();
  PowerOutcome outcome;
  EXPECT_ANY_THROW(run_power_capped(test_platform(), p, {}, square_law(50), outcome));
}
