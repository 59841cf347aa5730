// The shipped profiles: all load and validate, and their key figures are the ones hw-figures.md gives.
#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

using moesim::hw::CollectiveKind;
using moesim::hw::CollectiveScope;
using moesim::hw::FabricType;
using moesim::hw::HwProfile;

namespace {

constexpr double kGB = 1e9;
constexpr double kTflops = 1e12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const std::vector<std::string> kShipped{"a100", "a10g",   "b200",   "h100",  "h200",
                                        "h800", "mi300x", "mi325x", "mi355x"};

/** The published (datasheet + published measurement) profile, even where a calibrated one also ships. */
HwProfile shipped(const std::string& name) {
  return moesim::hw::load_profile_file(moesim::hw::profiles_dir(MOESIM_TEST_DATA_DIR) / (name + ".json"));
}

double large_busbw(const HwProfile& p, CollectiveKind kind, int gpus,
                   CollectiveScope scope = CollectiveScope::INTRA) {
  return p.busbw_Bps(kind, gpus, scope, 4 * kGiB);
}

}  // namespace

TEST(ShippedProfiles, TheProfilesOfTheSpecAndH800AreShipped) {
  EXPECT_EQ(moesim::hw::shipped_profile_names(MOESIM_TEST_DATA_DIR), kShipped);
}

TEST(ShippedProfiles, NamesResolveToTheCalibratedProfileWhereOneShips) {
  // h100 and h200 were calibrated on real GPUs (data/calibration/); the others have no calibration run.
  for (const char* name : {"h100", "h200"}) {
    EXPECT_EQ(moesim::hw::load_profile(name, MOESIM_TEST_DATA_DIR).provenance.kind,
              moesim::hw::ProvenanceKind::CALIBRATED)
        << name;
  }
  for (const char* name : {"a100", "mi300x", "mi325x"}) {
    EXPECT_EQ(moesim::hw::load_profile(name, MOESIM_TEST_DATA_DIR).provenance.kind,
              moesim::hw::ProvenanceKind::PUBLISHED)
        << name;
  }
}

class EachShippedProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(EachShippedProfile, LoadsValidatesAndCoversEveryGroupSize) {
  const HwProfile p = shipped(GetParam());
  EXPECT_EQ(p.name, GetParam());
  EXPECT_EQ(p.provenance.kind, moesim::hw::ProvenanceKind::PUBLISHED);
  EXPECT_FALSE(p.provenance.sources.empty());
  EXPECT_GT(p.peak_flops("bf16"), 0);
  for (auto kind : {CollectiveKind::ALL_TO_ALL, CollectiveKind::ALL_REDUCE, CollectiveKind::ALL_GATHER,
                    CollectiveKind::REDUCE_SCATTER}) {
    for (int gpus : {2, 4, 8}) EXPECT_EQ(p.collective_table(kind, gpus, CollectiveScope::INTRA).gpus, gpus);
  }
  // Inter-node tables cover a multi-node group, and a group past the largest table uses the largest.
  for (auto kind : {CollectiveKind::ALL_TO_ALL, CollectiveKind::ALL_REDUCE}) {
    const int largest = p.collective_table(kind, 1 << 20, CollectiveScope::INTER).gpus;
    EXPECT_GT(largest, p.node.gpus_per_node);
    EXPECT_EQ(p.collective_table(kind, 2 * p.node.gpus_per_node, CollectiveScope::INTER).gpus,
              2 * p.node.gpus_per_node);
  }
  // Efficiencies stay fractions everywhere, including between table points.
  for (std::int64_t m : {1, 100, 3000, 100000}) {
    for (std::int64_t nk : {300, 5000, 20000}) {
      double e = p.gemm_efficiency(m, nk, nk);
      EXPECT_GT(e, 0);
      EXPECT_LE(e, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ShippedProfiles, EachShippedProfile, ::testing::ValuesIn(kShipped),
                         [](const auto& param_info) { return param_info.param; });

TEST(ShippedProfiles, H100KeyFigures) {
  auto p = shipped("h100");
  EXPECT_DOUBLE_EQ(p.peak_flops("bf16"), 989.4 * kTflops);  // dense, not the sparse 1979 (pitfall 1)
  EXPECT_DOUBLE_EQ(p.gpu.hbm_bw_Bps, 3350 * kGB);
  EXPECT_DOUBLE_EQ(p.node.fabric.per_gpu_bw_Bps, 450 * kGB);  // 900 bidir (pitfall 2)
  EXPECT_EQ(p.node.fabric.type, FabricType::SWITCH);
  EXPECT_EQ(p.network.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(p.network.nic_bw_Bps, 50 * kGB);  // 400 Gb/s
  // Pitfall 3: NVLS all-reduce (480) exceeds the wire rate all-to-all sees (370).
  EXPECT_DOUBLE_EQ(large_busbw(p, CollectiveKind::ALL_REDUCE, 8), 480 * kGB);
  EXPECT_DOUBLE_EQ(large_busbw(p, CollectiveKind::ALL_TO_ALL, 8), 370 * kGB);
  // The best-shape GEMM reproduces the measured 794.5 TF/s it is anchored at (within table rounding).
  EXPECT_NEAR(p.achieved_gemm_flops("bf16", 16384, 8192, 8192) / kTflops, 794.5, 1.0);
}

TEST(ShippedProfiles, Mi300xIsAMeshWithASustainedClockFactor) {
  auto p = shipped("mi300x");
  EXPECT_EQ(p.node.fabric.type, FabricType::MESH);
  EXPECT_DOUBLE_EQ(p.gpu.sustained_clock_factor, 0.575);  // 1207 / 2100 MHz (pitfall 5)
  EXPECT_NEAR(p.achieved_gemm_flops("bf16", 16384, 8192, 8192) / kTflops, 668.4, 1.0);
  // Pitfall 4: a group of k GPUs reaches k-1 of 7 links.
  double eight = large_busbw(p, CollectiveKind::ALL_TO_ALL, 8);
  EXPECT_NEAR(large_busbw(p, CollectiveKind::ALL_TO_ALL, 2) / eight, 1.0 / 7.0, 1e-3);
  EXPECT_NEAR(large_busbw(p, CollectiveKind::ALL_TO_ALL, 4) / eight, 3.0 / 7.0, 1e-3);
  EXPECT_DOUBLE_EQ(p.fabric_injection_bw_Bps(1), 48 * kGB);
  // Measured RCCL all-reduce 319 GB/s at 16 GiB [S18].
  EXPECT_DOUBLE_EQ(p.busbw_Bps(CollectiveKind::ALL_REDUCE, 8, CollectiveScope::INTRA, 16 * kGiB), 319 * kGB);
}

TEST(ShippedProfiles, Mi325xDescribesTheFarSkipFourNodeCluster) {
  auto p = shipped("mi325x");
  EXPECT_EQ(p.network.nics_per_node, 8);             // one 400G NIC per GPU
  EXPECT_DOUBLE_EQ(p.network.nic_bw_Bps, 50 * kGB);  // 400 Gb/s
  EXPECT_DOUBLE_EQ(p.gpu.hbm_bw_Bps, 6000 * kGB);
  EXPECT_TRUE(p.has_collective(CollectiveKind::ALL_TO_ALL, CollectiveScope::INTER));
  EXPECT_EQ(p.collective_table(CollectiveKind::ALL_TO_ALL, 32, CollectiveScope::INTER).gpus, 32);  // EP=32
}

TEST(ShippedProfiles, A10gIsPcieOnlyWithOneNic) {
  auto p = shipped("a10g");
  EXPECT_EQ(p.node.fabric.type, FabricType::SWITCH);
  EXPECT_EQ(p.node.fabric.links_per_gpu, 1);
  EXPECT_DOUBLE_EQ(p.node.fabric.per_gpu_bw_Bps, 31.5 * kGB);
  EXPECT_EQ(p.network.nics_per_node, 1);
  EXPECT_DOUBLE_EQ(p.network.nic_bw_Bps, 12.5 * kGB);  // 100 Gb/s
  EXPECT_THROW(p.peak_flops("fp8"), moesim::ConfigError);
}

TEST(ShippedProfiles, A100HasNoFp8Peak) {
  auto p = shipped("a100");
  try {
    p.peak_flops("fp8");
    FAIL() << "A100 fp8 peak returned";
  } catch (const moesim::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              p.source_file +
                  ": /gpu/peak_tflops/fp8 is not given: NVIDIA A100 SXM4 80GB has no fp8 peak "
                  "(given: fp32, tf32, bf16, fp16)");
  }
}

TEST(ShippedProfiles, B200AndMi355xHeadlineFigures) {
  auto b200 = shipped("b200");
  EXPECT_DOUBLE_EQ(b200.peak_flops("bf16"), 2250 * kTflops);
  EXPECT_DOUBLE_EQ(b200.node.fabric.per_gpu_bw_Bps, 900 * kGB);
  EXPECT_DOUBLE_EQ(large_busbw(b200, CollectiveKind::ALL_REDUCE, 8), 830 * kGB);
  auto mi355x = shipped("mi355x");
  EXPECT_DOUBLE_EQ(mi355x.peak_flops("bf16"), 2516.6 * kTflops);
  EXPECT_DOUBLE_EQ(mi355x.gpu.hbm_bw_Bps, 8000 * kGB);
  EXPECT_THROW(mi355x.peak_flops("tf32"), moesim::ConfigError);  // TF32 not published
}
