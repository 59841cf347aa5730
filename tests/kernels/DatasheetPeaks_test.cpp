#include "moesim/kernels/DatasheetPeaks.hpp"

#include <gtest/gtest.h>

namespace moesim::kernels {
namespace {

TEST(DatasheetPeaksTest, KnowsHopperVariantsByRuntimeName) {
  EXPECT_EQ(datasheet_peak("NVIDIA H100 80GB HBM3")->part, "H100 SXM5");
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H100 80GB HBM3")->bf16_dense_tflops, 989.4);
  EXPECT_NEAR(datasheet_peak("NVIDIA H100 80GB HBM3")->tf32_dense_tflops(), 989.0 / 2, 0.5);  // 989 sparse
  EXPECT_EQ(datasheet_peak("NVIDIA H100 PCIe")->part, "H100 PCIe");
  EXPECT_EQ(datasheet_peak("NVIDIA H200")->part, "H200 SXM");
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA H200")->hbm_GBps, 4800);
  EXPECT_EQ(datasheet_peak("NVIDIA H200 NVL")->part, "H200 NVL");
}

TEST(DatasheetPeaksTest, KnowsInstinctAndRejectsUnknown) {
  EXPECT_DOUBLE_EQ(datasheet_peak("AMD Instinct MI300X")->bf16_dense_tflops, 1307.4);
  EXPECT_DOUBLE_EQ(datasheet_peak("AMD Instinct MI325X")->hbm_GBps, 6000);
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA A100-SXM4-80GB")->fp8_dense_tflops, 0);
  EXPECT_DOUBLE_EQ(datasheet_peak("NVIDIA A100-SXM4-80GB")->tf32_dense_tflops(), 156);
  EXPECT_DOUBLE_EQ(datasheet_peak("AMD Instinct MI300X")->tf32_dense_tflops(), 653.7);
  EXPECT_FALSE(datasheet_peak("NVIDIA GeForce RTX 4090").has_value());
}

}  // namespace
}  // namespace moesim::kernels
