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

TEST(BenchResults, ReadsPowerLoadsAndNvmlReadings) {
  const char* const power = R"({
  "schema_version": 1, "tool": "moesim-kernels", "benchmark": "power", "start_time": "2026-11-22T02:48:35Z",
  "gpus": [{"index": 0, "name": "NVIDIA H200", "arch": "sm_90", "multiprocessors": 132, "sm_clock_max_mhz": 1980}],
  "power_limit_w": [700.0, 650.0],
  "results": [
    {"load": "idle", "kind": "idle", "gpu": 0, "target_duty": 0.0, "duty": 0.0, "busy_GBps": 0.0,
     "first_burst_GBps": 0.0, "sm_clock_mhz": 1980.0, "power_w": 124.3, "clock_reasons": "none"},
    {"load": "gemm:8192:8192:8192", "kind": "gemm", "gpu": 0, "m": 8192, "n": 8192, "k": 8192, "dtype": "bf16",
     "target_duty": 1.0, "duty": 0.997, "busy_tflops": 674.1, "first_burst_tflops": 800.8, "sm_clock_mhz": 1487.0,
     "power_w": 692.0, "clock_reasons": "sw_power_cap"},
    {"load": "copy", "kind": "copy", "gpu": 0, "target_duty": 1.0, "duty": 1.0, "busy_GBps": 2121.9,
     "first_burst_GBps": 2116.2, "sm_clock_mhz": 1980.0, "power_w": 559.9, "clock_reasons": "none"}]})";
  BenchResults out;
  add_bench_document(power, "power.json", out);
  ASSERT_EQ(out.power.size(), 1u);
  const PowerRun& run = out.power[0];
  EXPECT_EQ(run.file, "power.json");
  EXPECT_EQ(run.limit_w, 700);  // the largest of the GPUs
  EXPECT_EQ(run.max_clock_hz, 1980e6);
  ASSERT_EQ(run.loads.size(), 3u);
  EXPECT_EQ(run.loads[1].kind, "gemm");
  EXPECT_EQ(run.loads[1].dtype, "bf16");
  EXPECT_DOUBLE_EQ(run.loads[1].busy_rate, 674.1e12);
  EXPECT_DOUBLE_EQ(run.loads[1].first_rate, 800.8e12);
  EXPECT_DOUBLE_EQ(run.loads[1].sm_clock_hz, 1487e6);
  EXPECT_EQ(run.loads[1].clock_reasons, "sw_power_cap");
  EXPECT_DOUBLE_EQ(run.loads[2].busy_rate, 2121.9e9);
  EXPECT_EQ(out.runs.back().benchmark, "power");

  std::string gemm = kGemmDocument;
  const std::string time = R"("time_us": {"p50": 135.968})";
  gemm.replace(gemm.find(time), time.size(),
               R"("time_us": {"p50": 135.968}, "nvml": {"sm_clock_mhz": 1530.0, "sm_clock_min_mhz": 1530,
                   "power_w": 204.0, "samples": 2, "clock_reasons": "sw_power_cap"})");
  BenchResults with_nvml;
  add_bench_document(gemm, "gemm.json", with_nvml);
  ASSERT_TRUE(with_nvml.gemm[0].nvml.has_value());
  EXPECT_DOUBLE_EQ(with_nvml.gemm[0].nvml->sm_clock_hz, 1530e6);
  EXPECT_EQ(with_nvml.gemm[0].nvml->samples, 2);
  EXPECT_FALSE(with_nvml.gemm[1].nvml.has_value());  // older records have none
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
            "other.json: /tool = \"nccl-tests\": not a kernels/ results file (expected moesim-kernels..., "
            "moesim-torch-index-add-rates or moesim-torch-window-attention)");
  // kernels/tools/torch_index_add_rates.py records: each case read as its rows, hidden, dtype and times.
  const std::string index_add = R"({"schema_version": 1, "tool": "moesim-torch-index-add-rates", "unit": "us",
    "date_utc": "2026-11-27T03:41:04Z", "gpu": "NVIDIA H200", "torch": "2.11.0", "results": [
    {"tokens": 2048, "hidden": 4096, "k": 2, "dtype": "bfloat16", "rows": 4096, "index_add_us": 130.3,
     "dense_add_us": 25.1, "ratio": 5.19}]})";
  BenchResults read;
  add_bench_document(index_add, "index-add.json", read);
  ASSERT_EQ(read.atomic_adds.size(), 1u);
  EXPECT_EQ(read.atomic_adds[0].rows, 4096);
  EXPECT_EQ(read.atomic_adds[0].hidden, 4096);
  EXPECT_EQ(read.atomic_adds[0].dtype, "bfloat16");
  EXPECT_DOUBLE_EQ(read.atomic_adds[0].time_s, 130.3e-6);
  EXPECT_DOUBLE_EQ(read.atomic_adds[0].dense_time_s, 25.1e-6);
  ASSERT_EQ(read.runs.size(), 1u);
  EXPECT_EQ(read.runs[0].benchmark, "torch_index_add");
  EXPECT_EQ(read.runs[0].gpu_name, "NVIDIA H200");
  EXPECT_EQ(read.runs[0].libraries.at("PyTorch"), "2.11.0");
  const auto index_add_with = [&](const std::string& from, const std::string& to) {
    std::string text = index_add;
    text.replace(text.find(from), from.size(), to);
    return error_of(text, "index-add.json");
  };
  EXPECT_EQ(index_add_with(", \"index_add_us\": 130.3", ""),
            "index-add.json: /results/0/index_add_us is missing");
  EXPECT_EQ(index_add_with("\"rows\": 4096", "\"rows\": 0"),
            "index-add.json: /results/0/rows = 0: must be an integer in [1, 16777216]");
  EXPECT_EQ(index_add_with("\"index_add_us\": 130.3", "\"index_add_us\": 0"),
            "index-add.json: /results/0/index_add_us = 0: must be in [0.001, 3600000000]");
  EXPECT_EQ(index_add_with("\"bfloat16\"", "\"float16\""),
            "index-add.json: /results/0/dtype = \"float16\": expected bfloat16 or float32");
  EXPECT_EQ(index_add_with("\"us\"", "\"ms\""), "index-add.json: /unit must be \"us\"");
  // kernels/tools/torch_window_attention.py records: a call a backend refused (an "error") is skipped.
  const std::string window = R"({"schema_version": 1, "tool": "moesim-torch-window-attention", "unit": "us",
    "date_utc": "2026-11-30T06:33:00Z", "gpu": "NVIDIA H200", "torch": "2.11.0", "tokens": 32768, "results": [
    {"backend": "flex", "shape": "gpt-oss", "heads": 64, "kv_heads": 8, "head_dim": 64, "seq": 4096, "batch": 8,
     "window_kind": "sliding", "window": 128, "forward_us": 662.3, "forward_backward_us": 3088.8},
    {"backend": "flex", "shape": "gpt-oss", "seq": 8192, "batch": 4, "window_kind": "full", "window": 0,
     "error": "CUDA out of memory."}]})";
  BenchResults windows;
  add_bench_document(window, "window.json", windows);
  ASSERT_EQ(windows.window_attention.size(), 1u);
  EXPECT_EQ(windows.window_attention[0].window_kind, "sliding");
  EXPECT_EQ(windows.window_attention[0].window, 128);
  EXPECT_EQ(windows.window_attention[0].batch, 8);
  EXPECT_DOUBLE_EQ(windows.window_attention[0].forward_s, 662.3e-6);
  EXPECT_EQ(windows.runs.at(0).benchmark, "torch_window_attention");
  std::string kind = window;
  kind.replace(kind.find("\"sliding\""), 9, "\"local\"");
  EXPECT_EQ(error_of(kind, "window.json"),
            "window.json: /results/0/window_kind = \"local\": expected full, sliding or chunked");
  std::string doc = kGemmDocument;
  doc.replace(doc.find("\"m\": 16"), 7, "\"m\": \"16\"");
  EXPECT_EQ(error_of(doc, "gemm.json"), "gemm.json: /results/1/m must be an integer");
}

}  // namespace
}  // namespace moesim::calibrate
