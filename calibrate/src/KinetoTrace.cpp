#include "moesim/calibrate/KinetoTrace.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "JsonText.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::calibrate {
namespace {

using detail::JsonAt;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return text.find(w) != std::string::npos; });
}

std::string dtype_of(const std::string& torch_type) {
  const std::string t = lower(torch_type);
  if (t.find("bfloat16") != std::string::npos) return "bf16";
  if (t.find("half") != std::string::npos) return "fp16";
  if (t.find("float8") != std::string::npos) return "fp8";
  if (t == "float") return "fp32";
  return "";
}

// Input limits (docs/limits.md): a tensor dimension below 2^31 and a GEMM side below 2^40, so that the
// shape's products stay exact; a kernel shorter than an hour.
constexpr std::int64_t kMaxTensorDim = std::int64_t{1} << 31;
constexpr std::int64_t kMaxGemmSide = std::int64_t{1} << 40;
constexpr double kMaxKernelUs = 3.6e9;

/** A tensor's dimensions; empty when the value is not a list of dimensions in [0, 2^31). */
std::vector<std::int64_t> dims(const nlohmann::json& value) {
  std::vector<std::int64_t> out;
  if (!value.is_array()) return out;
  for (const auto& d : value) {
    if (!d.is_number_integer()) return {};
    const bool in_range = d.is_number_unsigned()
                              ? d.get<std::uint64_t>() < static_cast<std::uint64_t>(kMaxTensorDim)
                              : d.get<std::int64_t>() >= 0 && d.get<std::int64_t>() < kMaxTensorDim;
    if (!in_range) return {};
    out.push_back(d.get<std::int64_t>());
  }
  return out;
}

/** The product of all dimensions but the last; 0 (no shape) past kMaxGemmSide. */
std::int64_t product_but_last(const std::vector<std::int64_t>& d) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] != 0 && p > kMaxGemmSide / d[i]) return 0;
    p *= d[i];
  }
  return p;
}

/** The string at `key` of an event, "" when absent; ConfigError when it is there but not a string. */
std::string event_string(const nlohmann::json& event, const char* key, const std::string& file,
                         const std::string& pointer) {
  auto it = event.find(key);
  if (it == event.end()) return "";
  if (!it->is_string())
    throw ConfigError(file, pointer + "/" + key, "= " + shown_value(*it) + ": must be a string");
  return it->get<std::string>();
}

// m, n, k of a recorded matrix-multiply op, from its "Input Dims".
std::optional<TraceGemmShape> gemm_shape(const std::string& op, const nlohmann::json& args) {
  if (!args.contains("Input Dims") || !args.at("Input Dims").is_array()) return std::nullopt;
  const auto& inputs = args.at("Input Dims");
  auto input = [&](std::size_t i) {
    return i < inputs.size() ? dims(inputs[i]) : std::vector<std::int64_t>{};
  };
  TraceGemmShape s;
  std::vector<std::int64_t> a, b;
  if (op == "aten::mm" || op == "aten::matmul") {
    a = input(0);
    b = input(1);
    if (a.size() < 2 || b.size() < 2) return std::nullopt;
    s = {product_but_last(a), b.back(), a.back(), ""};
  } else if (op == "aten::addmm") {
    a = input(1);
    b = input(2);
    if (a.size() != 2 || b.size() != 2) return std::nullopt;
    s = {a[0], b[1], a[1], ""};
  } else if (op == "aten::bmm") {
    a = input(0);
    b = input(1);
    if (a.size() != 3 || b.size() != 3) return std::nullopt;
    s = {product_but_last(a), b[2], a[2], ""};
  } else if (op == "aten::linear") {
    a = input(0);
    b = input(1);  // weight [n, k]
    if (a.size() < 2 || b.size() != 2) return std::nullopt;
    s = {product_but_last(a), b[0], a.back(), ""};
  } else {
    return std::nullopt;
  }
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
  if (args.contains("Input type") && args.at("Input type").is_array()) {
    for (const auto& t : args.at("Input type")) {
      if (t.is_string() && !dtype_of(t.get<std::string>()).empty()) {
        s.dtype = dtype_of(t.get<std::string>());
        break;
      }
    }
  }
  return s;
}

std::optional<std::int64_t> external_id(const nlohmann::json& event) {
  if (!event.contains("args") || !event.at("args").is_object()) return std::nullopt;
  const auto& args = event.at("args");
  auto it = args.find("External id");
  if (it == args.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::string to_string(KernelCategory category) {
  switch (category) {
    case KernelCategory::GEMM:
      return "gemm";
    case KernelCategory::ATTENTION:
      return "attention";
    case KernelCategory::NCCL:
      return "nccl";
    case KernelCategory::OTHER:
      break;
  }
  return "other";
}

KernelCategory kernel_category(const std::string& name) {
  const std::string n = lower(name);
  if (contains_any(n, {"nccl", "rccl"})) return KernelCategory::NCCL;
  if (contains_any(n, {"flash", "fmha", "sdpa", "attention"})) return KernelCategory::ATTENTION;
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "cublas", "hipblaslt", "matmul", "tensorop"}))
    return KernelCategory::GEMM;
  return KernelCategory::OTHER;
}

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file) {
  const nlohmann::json document = detail::parse_json_lines(text, file);
  JsonAt root(document, file);
  if (!document.is_object() || !document.contains("traceEvents"))
    throw ConfigError(file, "/traceEvents", "is missing: not a Chrome/Kineto trace");
  JsonAt events = root.at("traceEvents");
  if (!events.value().is_array()) root.fail("traceEvents", "must be an array");
  std::map<std::int64_t, std::size_t> cpu_ops;  // External id -> index of the CPU op
  for (std::size_t i = 0; i < events.value().size(); ++i) {
    const auto& event = events.value()[i];
    if (!event.is_object()) continue;
    const std::string pointer = "/traceEvents/" + std::to_string(i);
    if (event_string(event, "cat", file, pointer) != "cpu_op") continue;
    if (auto id = external_id(event)) cpu_ops.emplace(*id, i);
  }
  KinetoTrace trace;
  trace.file = file;
  for (std::size_t i = 0; i < events.value().size(); ++i) {
    const auto& event = events.value()[i];
    const std::string pointer = "/traceEvents/" + std::to_string(i);
    if (!event.is_object() || event_string(event, "ph", file, pointer) != "X" ||
        event_string(event, "cat", file, pointer) != "kernel")
      continue;
    JsonAt at = events.at(i);
    TraceKernel kernel;
    kernel.name = at.string("name");
    kernel.category = kernel_category(kernel.name);
    const double dur_us = at.number("dur");
    if (!(dur_us >= 0 && dur_us <= kMaxKernelUs))
      at.fail("dur", "= " + format_number(dur_us) + ": must be in [0, 3.6e9] us");
    kernel.duration_s = dur_us * 1e-6;
    if (auto id = external_id(event)) {
      auto op = cpu_ops.find(*id);
      if (op != cpu_ops.end()) {
        const auto& cpu_op = events.value()[op->second];
        const std::string op_pointer = "/traceEvents/" + std::to_string(op->second);
        auto args = cpu_op.find("args");
        kernel.gemm =
            gemm_shape(event_string(cpu_op, "name", file, op_pointer),
                       args != cpu_op.end() && args->is_object() ? *args : nlohmann::json::object());
      }
    }
    trace.kernels.push_back(kernel);
  }
  return trace;
}

KinetoTrace load_kineto_trace(const std::string& path) {
  return parse_kineto_trace(detail::read_text_file(path), path);
}

}  // namespace moesim::calibrate
