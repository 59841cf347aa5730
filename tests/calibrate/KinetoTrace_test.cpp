// Kernel durations and GEMM shapes from a PyTorch profiler (Kineto) Chrome trace.
#include "moesim/calibrate/KinetoTrace.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

// Abridged from torch.profiler's export_chrome_trace (record_shapes=True): cpu ops, runtime calls, kernels.
const char* const kTrace = R"json({
  "schemaVersion": 1,
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 40,
     "args": {"External id": 1, "Input Dims": [[2, 2048, 2048], [6144, 2048], []], "Input type": ["c10::BFloat16", "c10::BFloat16", ""]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 50, "dur": 30,
     "args": {"External id": 2, "Input Dims": [[4096, 7168], [7168, 2048]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 55, "dur": 4,
     "args": {"External id": 2, "correlation": 12}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTN", "pid": 0, "tid": 7, "ts": 60,
     "dur": 136.0, "args": {"External id": 1, "device": 0, "stream": 7, "correlation": 11}},
    {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", "pid": 0,
     "tid": 7, "ts": 200, "dur": 150.5, "args": {"External id": 2, "device": 0, "stream": 7, "correlation": 12}},
    {"ph": "X", "cat": "kernel", "name": "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3",
     "pid": 0, "tid": 7, "ts": 400, "dur": 72.0, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 20, "ts": 500, "dur": 327.0, "args": {"device": 0, "stream": 20}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0, "tid": 7,
     "ts": 900, "dur": 5.0, "args": {"device": 0, "stream": 7}},
    {"ph": "i", "cat": "kernel", "name": "instant events are not kernels", "ts": 1000}
  ]
})json";

TEST(KinetoTrace, KernelsByCategoryWithGemmShapes) {
  const KinetoTrace t = parse_kineto_trace(kTrace, "trace.json");
  ASSERT_EQ(t.kernels.size(), 5u);
  EXPECT_EQ(t.kernels[0].kind, traces::GpuKind::GEMM);
  ASSERT_TRUE(t.kernels[0].gemm.has_value());
  // aten::linear: input [2, 2048, 2048] -> m = 4096 rows, k = 2048; weight [6144, 2048] -> n = 6144.
  EXPECT_EQ(t.kernels[0].gemm->m, 4096);
  EXPECT_EQ(t.kernels[0].gemm->n, 6144);
  EXPECT_EQ(t.kernels[0].gemm->k, 2048);
  EXPECT_EQ(t.kernels[0].gemm->dtype, "bf16");
  EXPECT_DOUBLE_EQ(t.kernels[0].duration_s, 136e-6);
  // aten::mm [4096, 7168] x [7168, 2048].
  ASSERT_TRUE(t.kernels[1].gemm.has_value());
  EXPECT_EQ(t.kernels[1].gemm->m, 4096);
  EXPECT_EQ(t.kernels[1].gemm->n, 2048);
  EXPECT_EQ(t.kernels[1].gemm->k, 7168);
  EXPECT_EQ(t.kernels[2].kind, traces::GpuKind::ATTENTION);
  EXPECT_EQ(t.kernels[3].kind, traces::GpuKind::NCCL);
  EXPECT_EQ(t.kernels[4].kind, traces::GpuKind::OTHER);
  EXPECT_FALSE(t.kernels[4].gemm.has_value());
}

TEST(KinetoTrace, AShapePastTheLimitsIsNoShape) {
  // docs/limits.md: a tensor dimension of 2^31 = 2147483648 is not used as a GEMM shape; 2^31 - 1 is.
  auto shape_of = [](const std::string& m) {
    const std::string text = R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1,
       "args": {"External id": 1, "Input Dims": [[)" +
                             m + R"(, 8], [8, 16]], "Input type": ["c10::Float8_e4m3fn"]}},
      {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1, "dur": 1, "args": {"External id": 1}}]})";
    return parse_kineto_trace(text, "t.json").kernels.at(0).gemm;
  };
  EXPECT_FALSE(shape_of("2147483648").has_value());
  ASSERT_TRUE(shape_of("2147483647").has_value());
  EXPECT_EQ(shape_of("2147483647")->m, 2147483647);
  EXPECT_EQ(shape_of("2147483647")->dtype, "fp8");
}

TEST(KinetoTrace, RejectsWhatIsNotATrace) {
  EXPECT_THROW(parse_kineto_trace(R"({"events": []})", "x.json"), ConfigError);
  try {
    parse_kineto_trace("{\"traceEvents\": [\n{\"ph\": \"X\",\n \"cat\": kernel}]}", "broken.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("broken.json:3: invalid JSON", 0), 0u) << e.what();
  }
  // The reader is traces/'s: a trace of CPU ops only is refused there, naming the file and /traceEvents.
  try {
    parse_kineto_trace(
        R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})",
        "cpu.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cpu.json: /traceEvents holds no GPU kernels", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace moesim::calibrate
