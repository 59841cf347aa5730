#pragma once
/**
 * @file The events of a PyTorch profiler (Kineto) Chrome trace that say what ran where:
 *
 *   {"traceEvents": [
 *     {"ph": "X", "cat": "user_annotation", "name": "moesim.L0.gate", "tid": 11, "ts": 100, "dur": 40},
 *     {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 11, "ts": 105, "dur": 30,
 *      "args": {"External id": 7, "Sequence number": 52, "Input Dims": [[2048, 2048], [2048, 128]]}},
 *     {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 11, "ts": 120, "dur": 6,
 *      "args": {"correlation": 91}},
 *     {"ph": "X", "cat": "kernel", "name": "nvjet_tst_...", "ts": 128, "dur": 13.5,
 *      "args": {"External id": 7, "correlation": 91, "stream": 7}}, ...]}
 *
 * GPU work is the complete events of categories kernel, gpu_memcpy and gpu_memset; the host calls that
 * launched them (cuda_runtime or cuda_driver) share their "correlation"; the CPU op that issued a launch
 * shares its "External id". Ranges are user_annotation events (record_function); module calls are the Python
 * tracer's "nn.Module: <class>_<n>" events, where the trace has them. Times are microseconds.
 * This is moesim's one reader of the format: calibrate fits GEMM rates and learns implementation profiles
 * from what it returns, validate compares with it.
 */
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moesim::traces {

/** @brief What a GPU event is, from its category and name. */
enum class GpuKind {
  GEMM,       ///< cuBLAS/cuBLASLt/CUTLASS matrix multiplies (gemm, nvjet, cutlass, xmma...)
  ATTENTION,  ///< fused attention (flash, fmha, sdpa, cudnn attention)
  NCCL,       ///< NCCL/RCCL collective kernels
  MEMCPY,     ///< a copy (gpu_memcpy)
  MEMSET,     ///< a memset (gpu_memset)
  OTHER,      ///< every other kernel: elementwise, reductions, sorts, gathers, norms
};

/** @brief "gemm", "attention", "nccl", "memcpy", "memset", "other". */
std::string to_string(GpuKind kind);

/** @brief One kernel, copy or memset on a GPU. */
struct GpuEvent {
  std::string name;
  GpuKind kind = GpuKind::OTHER;
  double ts_us = 0, dur_us = 0;
  std::int64_t correlation = -1;
  std::int64_t external_id = -1;
  std::int64_t stream = -1;
  bool device_to_host = false;  ///< a copy to host memory
  bool pageable = false;        ///< ... to pageable memory: the host call blocks until it is done
  std::int64_t bytes = -1;      ///< what a copy or memset moves (its args.bytes); -1: not said (kernels)
};

/** @brief One CUDA runtime or driver call of a host thread. */
struct HostCall {
  std::string name;
  std::int64_t tid = 0;
  double ts_us = 0, dur_us = 0;
  std::int64_t correlation = -1;
  bool is_sync() const;  ///< a call that blocks until the GPU catches up (stream/device/event synchronize)
};

/** @brief One CPU op (aten::..., autograd::engine::evaluate_function: ...). */
struct CpuOp {
  std::string name;
  std::int64_t tid = 0;
  double ts_us = 0, dur_us = 0;
  std::int64_t external_id = -1;
  std::optional<std::int64_t> sequence;  ///< autograd sequence number
  /// "Input Dims" (record_shapes), empty lists for scalars; a list of tensors as the tensor they make joined
  /// along the one dim where they differ (aten::cat's), else as the largest of them
  std::vector<std::vector<std::int64_t>> inputs;
  std::vector<std::string> input_types;  ///< "Input type" (record_shapes): "c10::BFloat16", "float", ...
};

/** @brief One record_function range. */
struct Range {
  std::string name;
  std::int64_t tid = 0;
  double ts_us = 0, dur_us = 0;
  double end_us() const { return ts_us + dur_us; }
};

/**
 * @brief One call of a module's forward, from the Python tracer (`profile(with_stack=True)`):
 * {"cat": "python_function", "name": "nn.Module: Qwen3MoeAttention_0", ...}.
 */
struct ModuleCall {
  std::string type;  ///< the module's class name ("Qwen3MoeAttention")
  int instance = 0;  ///< which module of that class (its _N suffix: the order in which the tracer met it)
  std::int64_t tid = 0;
  double ts_us = 0, dur_us = 0;
  double end_us() const { return ts_us + dur_us; }
};

/** @brief The parts of a trace attribution needs, each list in order of start time. */
struct TorchTrace {
  std::string file;
  std::vector<GpuEvent> gpu;
  std::vector<HostCall> calls;
  std::vector<CpuOp> cpu_ops;
  std::vector<Range> ranges;
  std::vector<ModuleCall> modules;
};

/** @brief GpuKind of a kernel name (case-insensitive substrings). */
GpuKind kernel_kind(const std::string& name);

/**
 * @brief Parses trace text. ConfigError (one line) "file:LINE: invalid JSON: ..." for text that is not JSON
 * (parse_json_text), "file: /pointer ..." for a document that is not a Kineto Chrome trace (no traceEvents
 * array: the legacy profiler's bare list included), an event with a malformed name, category or time (a
 * duration past 3.6e9 us included), or a trace without GPU kernels.
 */
TorchTrace parse_torch_trace(const std::string& text, const std::string& file);

/** @brief Reads (gzip or plain, traces::read_trace_text) and parses a trace file. */
TorchTrace load_torch_trace(const std::string& path);

}  // namespace moesim::traces
