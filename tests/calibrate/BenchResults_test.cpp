// Reading kernels/ results files: the fields calibration needs, and one-line errors for bad files.
#include "moesim/calibrate/BenchResults.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

const char* const kGemmDocument = R"({
  "schema_version": 1, "tool": "moesim-kernels", "benchmark": "gemm", "start_time": "2026-11-21T21:28:12Z",
  "gpu_api": "CUDA", "driver_version": "580.159.04", "driver_api_version": "13.0", "runtime_version": "13.0",
  "libraries": {"cuBLASLt": "13.1.0"}, "environment": {"NCCL_NVLS_ENABLE": "0"},
  "gpus": [{"index": 0, "name": "NVIDIA H200", "arch": "sm_90", "multiprocessors": 132}],
  "results": [
    {"name": "qkv_h2048", "m": 4096, "n": 6144, "k": 2048, "in_dtype": "bf16", "time_us": {"p50": 135.968}},
    {"name": "up", "m": 16, "n": 2816, "k": 2048, "in_dtype": "fp8e4m3", "time_us": {"p50": 6.29}}]
})";

TEST(BenchResults, ReadsHarnessDocuments) {
  BenchResults out;
  add_bench_document(kGemmDocument, "gemm.json", out);
  ASSERT_EQ(out.runs.size(), 1u);
  const RunInfo& run = out.runs[0];
  EXPECT_EQ(run.benchmark, "gemm");
  EXPECT_EQ(run.gpu_name, "NVIDIA H200");
  EXPECT_EQ(run.sm_count, 132);
  EXPECT_EQ(run.gpu_count, 1);
  EXPECT_EQ(run.driver, "580.159.04");
  EXPECT_EQ(run.libraries.at("cuBLASLt"), "13.1.0");
  ASSERT_EQ(out.gemm.size(), 2u);
  EXPECT_EQ(out.gemm[0].m, 4096);
  EXPECT_DOUBLE_EQ(out.gemm[0].time_s, 135.968e-6);
  EXPECT_EQ(out.gemm[1].dtype, "fp8");  // fp8e4m3 in profile spelling
}

TEST(BenchResults, ReadsMergedBenchFilesAndTorchSdpa) {
  const std::string merged = std::string(R"({"schema_version": 1, "tool": "moesim bench", "suites": [)") +
                             kGemmDocument +
                             R"(, {"schema_version": 1, "tool": "moesim-kernels/torch_sdpa_compare.py",
      "start_time": "2026-11-21T21:28:49+00:00", "torch": "2.11.0+cu130", "cudnn": 91900, "gpu": "NVIDIA H200",
      "results": [{"backend": "cudnn", "batch_heads": 16, "seq_len": 2048, "d_qk": 128, "d_v": 128, "pass": "fwd",
                   "time_us": {"p50": 72.19}}]},
      {"schema_version": 1, "tool": "moesim-kernels", "benchmark": "persistent", "results": []}]})";
  BenchResults out;
  add_bench_document(merged, "bench.json", out);
  EXPECT_EQ(out.gemm.size(), 2u);
  ASSERT_EQ(out.attention.size(), 1u);
  EXPECT_EQ(out.attention[0].impl, "torch:cudnn");
  EXPECT_TRUE(out.attention[0].forward);
  EXPECT_EQ(out.runs.back().libraries.at("cuDNN"), "9.19.0");  // 91900
  EXPECT_EQ(out.ignored, std::vector<std::string>{"bench.json: persistent"});
}

std::string error_of(const std::string& text, const std::string& file) {
  try {
    BenchResults out;
    add_bench_document(text, file, out);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(BenchResults, ErrorsNameFileAndLineOrPointer) {
  // A syntax error: the comma missing after "gemm" is noticed at "tool" on line 4.
  EXPECT_EQ(error_of("{\n  \"schema_version\": 1,\n  \"benchmark\": \"gemm\"\n  \"tool\": 1}", "bad.json")
                .rfind("bad.json:4: invalid JSON", 0),
            0u)
      << error_of("{\n  \"schema_version\": 1,\n  \"benchmark\": \"gemm\"\n  \"tool\": 1}", "bad.json");
  EXPECT_EQ(error_of(R"({"schema_version": 2, "tool": "moesim-kernels"})", "v2.json"),
            "v2.json: /schema_version must be 1 (a kernels/ results file: see kernels/README.md)");
  EXPECT_EQ(error_of(R"({"schema_version": 1, "tool": "nccl-tests", "results": []})", "other.json"),
            "other.json: /tool = \"nccl-tests\": not a kernels/ results file (expected moesim-kernels...)");
  std::string doc = kGemmDocument;
  doc.replace(doc.find("\"m\": 16"), 7, "\"m\": \"16\"");
  EXPECT_EQ(error_of(doc, "gemm.json"), "gemm.json: /results/1/m must be an integer");
}

}  // namespace
}  // namespace moesim::calibrate
