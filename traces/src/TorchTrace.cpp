#include "moesim/traces/TorchTrace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "TextMatch.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/traces/TraceFile.hpp"

namespace moesim::traces {
namespace {

using detail::contains_any;
using detail::lowered;

// Input limits (docs/limits.md): no event lasts an hour.
constexpr double kMaxDurationUs = 3.6e9;

// Reads one event's fields, naming the event's JSON pointer in every error.
class EventReader {
 public:
  EventReader(const nlohmann::json& event, const std::string& file, std::size_t index)
      : event_(event), file_(file), pointer_("/traceEvents/" + std::to_string(index)) {}

  std::string text(const char* key) const {
    auto it = event_.find(key);
    if (it == event_.end()) return "";
    if (!it->is_string()) fail(key, "= " + shown_value(*it) + ": must be a string");
    return it->get<std::string>();
  }

  double time(const char* key) const {
    auto it = event_.find(key);
    if (it == event_.end()) fail(key, "is missing");
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      fail(key, "must be a number >= 0 (microseconds)");
    return it->get<double>();
  }

  double duration() const {
    const double dur = time("dur");
    if (dur > kMaxDurationUs) fail("dur", "= " + shown_value(event_.at("dur")) + ": must be <= 3.6e9 us");
    return dur;
  }

  std::int64_t tid() const {
    auto it = event_.find("tid");
    return it != event_.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  }

  std::optional<std::int64_t> arg(const char* key) const {
    auto args = event_.find("args");
    if (args == event_.end() || !args->is_object()) return std::nullopt;
    auto it = args->find(key);
    if (it == args->end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
  }

  std::vector<std::vector<std::int64_t>> input_dims() const {
    std::vector<std::vector<std::int64_t>> out;
    auto args = event_.find("args");
    if (args == event_.end() || !args->is_object()) return out;
    auto dims = args->find("Input Dims");
    if (dims == args->end() || !dims->is_array()) return out;
    for (const auto& input : *dims) {
      const bool tensor_list = input.is_array() && !input.empty() && input.front().is_array();
      out.push_back(tensor_list ? joined_shape(input) : shape_of(input));
    }
    return out;
  }

  // A list of tensors (aten::cat's) records a list of shapes: it stands as the tensor they make joined along
  // the one dim where they differ (the last where none does), so that a cat scales with what it writes:
  // RoPE's two halves make a head's width, MLA's [.., 4096, 128] and [.., 4096, 64] its 192-wide query heads.
  // Parts that differ in more than one dim, or in rank, stand as the largest of them.
  static std::vector<std::int64_t> joined_shape(const nlohmann::json& list) {
    std::vector<std::vector<std::int64_t>> parts;
    for (const auto& tensor : list)
      if (std::vector<std::int64_t> shape = shape_of(tensor); !shape.empty())
        parts.push_back(std::move(shape));
    if (parts.empty()) return {};
    std::vector<std::int64_t> joined = parts.front();
    std::optional<std::size_t> along;
    bool joinable = true;
    for (const auto& part : parts) {
      if (part.size() != joined.size()) joinable = false;
      for (std::size_t d = 0; joinable && d < part.size(); ++d) {
        if (part[d] == joined[d]) continue;
        if (along && *along != d) joinable = false;
        along = d;
      }
    }
    const auto largest = [&] {
      return *std::max_element(parts.begin(), parts.end(),
                               [](const auto& a, const auto& b) { return elements(a) < elements(b); });
    };
    if (!joinable) return largest();
    const std::size_t d = along.value_or(joined.size() - 1);
    joined[d] = 0;
    for (const auto& part : parts) {
      if (part[d] > std::numeric_limits<std::int64_t>::max() - joined[d])
        return largest();  // not a real shape
      joined[d] += part[d];
    }
    return joined;
  }

  // The dims of one tensor's shape; empty for anything else.
  static std::vector<std::int64_t> shape_of(const nlohmann::json& input) {
    std::vector<std::int64_t> shape;
    if (!input.is_array()) return shape;
    for (const auto& d : input) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return {};
      shape.push_back(d.get<std::int64_t>());
    }
    return shape;
  }

  static double elements(const std::vector<std::int64_t>& shape) {
    double n = 1;
    for (std::int64_t d : shape) n *= static_cast<double>(d);
    return n;
  }

  // "Input type" (record_shapes): the inputs' element types as PyTorch spells them, "" where not a string.
  std::vector<std::string> input_types() const {
    std::vector<std::string> out;
    auto args = event_.find("args");
    if (args == event_.end() || !args->is_object()) return out;
    auto types = args->find("Input type");
    if (types == args->end() || !types->is_array()) return out;
    for (const auto& t : *types) out.push_back(t.is_string() ? t.get<std::string>() : "");
    return out;
  }

  [[noreturn]] void fail(const char* key, const std::string& message) const {
    throw ConfigError(file_, pointer_ + "/" + key, message);
  }

 private:
  const nlohmann::json& event_;
  const std::string& file_;
  std::string pointer_;
};

template <typename T>
void sort_by_start(std::vector<T>& events) {
  std::stable_sort(events.begin(), events.end(), [](const T& a, const T& b) { return a.ts_us < b.ts_us; });
}

}  // namespace

std::string to_string(GpuKind kind) {
  switch (kind) {
    case GpuKind::GEMM:
      return "gemm";
    case GpuKind::ATTENTION:
      return "attention";
    case GpuKind::NCCL:
      return "nccl";
    case GpuKind::MEMCPY:
      return "memcpy";
    case GpuKind::MEMSET:
      return "memset";
    case GpuKind::OTHER:
      break;
  }
  return "other";
}

bool HostCall::is_sync() const {
  return name == "cudaStreamSynchronize" || name == "cudaDeviceSynchronize" ||
         name == "cudaEventSynchronize" || name == "cuStreamSynchronize" || name == "cuCtxSynchronize" ||
         name == "cuEventSynchronize";
}

GpuKind kernel_kind(const std::string& name) {
  const std::string n = lowered(name);
  if (contains_any(n, {"nccl", "rccl"})) return GpuKind::NCCL;
  if (contains_any(n, {"flash", "fmha", "sdpa", "attention"})) return GpuKind::ATTENTION;
  // CUTLASS's grouped GEMM is preceded by a small kernel that lays out the problem sizes: not a GEMM.
  if (contains_any(n, {"prepare_grouped_gemm"})) return GpuKind::OTHER;
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "cublas", "hipblaslt", "matmul", "tensorop"}))
    return GpuKind::GEMM;
  return GpuKind::OTHER;
}

namespace {

// "nn.Module: Qwen3MoeAttention_0" -> {Qwen3MoeAttention, 0}; nullopt for every other Python function.
std::optional<ModuleCall> module_call(const std::string& name) {
  const std::string prefix = "nn.Module: ";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t underscore = name.rfind('_');
  if (underscore == std::string::npos || underscore <= prefix.size() || underscore + 1 == name.size() ||
      name.size() - underscore > 7)
    return std::nullopt;
  const std::string digits = name.substr(underscore + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  ModuleCall call;
  call.type = name.substr(prefix.size(), underscore - prefix.size());
  call.instance = std::stoi(digits);
  return call;
}

}  // namespace

TorchTrace parse_torch_trace(const std::string& text, const std::string& file) {
  const nlohmann::json document = parse_json_text(text, file);
  if (!document.is_object() || !document.contains("traceEvents") || !document.at("traceEvents").is_array())
    throw ConfigError(file, "/traceEvents",
                      "is missing: not a PyTorch profiler (Kineto) trace (torch.profiler.profile(...)."
                      "export_chrome_trace writes one)");
  TorchTrace trace;
  trace.file = file;
  const auto& events = document.at("traceEvents");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& event = events[i];
    if (!event.is_object()) continue;
    EventReader e(event, file, i);
    if (e.text("ph") != "X") continue;
    const std::string cat = e.text("cat");
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      GpuEvent g;
      g.name = e.text("name");
      g.kind = cat == "gpu_memcpy"   ? GpuKind::MEMCPY
               : cat == "gpu_memset" ? GpuKind::MEMSET
                                     : kernel_kind(g.name);
      g.ts_us = e.time("ts");
      g.dur_us = e.duration();
      g.correlation = e.arg("correlation").value_or(-1);
      g.external_id = e.arg("External id").value_or(-1);
      g.stream = e.arg("stream").value_or(-1);
      g.device_to_host = g.name.find("DtoH") != std::string::npos;
      g.pageable = g.name.find("Pageable") != std::string::npos;
      if (g.kind == GpuKind::MEMCPY || g.kind == GpuKind::MEMSET)
        g.bytes = std::max<std::int64_t>(e.arg("bytes").value_or(-1), -1);
      trace.gpu.push_back(std::move(g));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      trace.calls.push_back(
          {e.text("name"), e.tid(), e.time("ts"), e.duration(), e.arg("correlation").value_or(-1)});
    } else if (cat == "cpu_op") {
      CpuOp op;
      op.name = e.text("name");
      op.tid = e.tid();
      op.ts_us = e.time("ts");
      op.dur_us = e.duration();
      op.external_id = e.arg("External id").value_or(-1);
      op.sequence = e.arg("Sequence number");
      op.inputs = e.input_dims();
      op.input_types = e.input_types();
      trace.cpu_ops.push_back(std::move(op));
    } else if (cat == "user_annotation") {
      trace.ranges.push_back({e.text("name"), e.tid(), e.time("ts"), e.duration()});
    } else if (cat == "python_function") {
      if (auto module = module_call(e.text("name"))) {
        module->tid = e.tid();
        module->ts_us = e.time("ts");
        module->dur_us = e.duration();
        trace.modules.push_back(std::move(*module));
      }
    }
  }
  if (std::none_of(trace.gpu.begin(), trace.gpu.end(),
                   [](const GpuEvent& g) { return g.kind != GpuKind::MEMCPY && g.kind != GpuKind::MEMSET; }))
    throw ConfigError(
        file, "/traceEvents",
        "holds no GPU kernels: profile with ProfilerActivity.CUDA on a GPU (a CPU-only trace cannot "
        "be learned from)");
  sort_by_start(trace.gpu);
  sort_by_start(trace.calls);
  sort_by_start(trace.cpu_ops);
  sort_by_start(trace.ranges);
  sort_by_start(trace.modules);
  return trace;
}

TorchTrace load_torch_trace(const std::string& path) {
  return parse_torch_trace(read_trace_text(path), path);
}

}  // namespace moesim::traces
