#pragma once
/**
 * @file The GPU kernels of a PyTorch profiler (Kineto) trace as GEMM calibration reads them: each kernel's
 * kind and duration, and, when the CPU op that launched it (same "External id") is a matrix multiply recorded
 * with shapes (`record_shapes=True`: aten::mm, addmm, bmm, linear, matmul), the GEMM shape m, n, k
 * (bmm: m = batch · rows) and input dtype. The trace itself is read by traces::parse_torch_trace, moesim's
 * one reader of the format; this is a view of it.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moesim/traces/TorchTrace.hpp"

namespace moesim::calibrate {

/** @brief A GEMM shape recorded with a kernel: m×k by k×n, in the input dtype (profile spelling). */
struct TraceGemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype;  ///< bf16, fp16, fp32, fp8 ("" when the trace gave no type)
};

/** @brief One GPU kernel of the trace (copies and memsets are not kernels). */
struct TraceKernel {
  std::string name;
  traces::GpuKind kind = traces::GpuKind::OTHER;  ///< GEMM, ATTENTION, NCCL or OTHER
  double duration_s = 0;
  std::optional<TraceGemmShape> gemm;  ///< set when its CPU op was a matrix multiply with shapes
};

/** @brief The kernels of one trace, in order of start time. */
struct KinetoTrace {
  std::string file;
  std::vector<TraceKernel> kernels;
};

/** @brief The kernels of a parsed trace, with the GEMM shapes of their CPU ops. */
KinetoTrace trace_kernels(const traces::TorchTrace& trace);

/** @brief Parses a trace's text (traces::parse_torch_trace: its one-line errors). */
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file);

/** @brief Reads (gzip or plain) and parses a trace file. */
KinetoTrace load_kineto_trace(const std::string& path);

}  // namespace moesim::calibrate
