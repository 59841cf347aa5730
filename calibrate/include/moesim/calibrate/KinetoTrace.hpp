#pragma once
/**
 * @file Kernel durations from a PyTorch profiler (Kineto) Chrome trace (`prof.export_chrome_trace`):
 *
 *   {"traceEvents": [
 *     {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 10, "dur": 30,
 *      "args": {"External id": 7, "Input Dims": [[4096, 2048], [2048, 6144]], "Input type": ["c10::BFloat16",
 * ...]}},
 *     {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x256_...", "ts": 25, "dur": 136.0,
 *      "args": {"External id": 7, "device": 0, "stream": 7, "correlation": 91}}, ...]}
 *
 * Complete ("X") events of category "kernel" are GPU kernels. Their names sort them into GEMM,
 * attention, NCCL and other kernels. A kernel whose "External id" names a matrix-multiply CPU op
 * recorded with shapes (`record_shapes=True`: aten::mm, addmm, bmm, linear, matmul) gets the GEMM
 * shape m, n, k (bmm: m = batch · rows).
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moesim::calibrate {

/** @brief What a kernel is, by its name. */
enum class KernelCategory { GEMM, ATTENTION, NCCL, OTHER };

/** @brief "gemm", "attention", "nccl", "other". */
std::string to_string(KernelCategory category);

/** @brief The category of a kernel name (case-insensitive substrings: nccl/rccl; flash/fmha/sdpa/attention;
 * gemm/nvjet/xmma/cutlass/cublas/hipblaslt/matmul/tensorop). */
KernelCategory kernel_category(const std::string& name);

/** @brief A GEMM shape recorded with a kernel: m×k by k×n, in the input dtype (profile spelling). */
struct TraceGemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype;  ///< bf16, fp16, fp32, fp8 ("" when the trace gave no type)
};

/** @brief One GPU kernel of the trace. */
struct TraceKernel {
  std::string name;
  KernelCategory category = KernelCategory::OTHER;
  double duration_s = 0;
  std::optional<TraceGemmShape> gemm;  ///< set when its CPU op was a matrix multiply with shapes
};

/** @brief The kernels of one trace. */
struct KinetoTrace {
  std::string file;
  std::vector<TraceKernel> kernels;
};

/** @brief Parses a trace's text; ConfigError "file:LINE: ..." for invalid JSON, "file: /pointer ..." for a
 * document that is not a Chrome trace with traceEvents. */
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file);

/** @brief Reads and parses a trace file. */
KinetoTrace load_kineto_trace(const std::string& path);

}  // namespace moesim::calibrate
