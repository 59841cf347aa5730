#include "moesim/calibrate/KinetoTrace.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace moesim::calibrate {
namespace {

std::string dtype_of(std::string torch_type) {
  std::transform(torch_type.begin(), torch_type.end(), torch_type.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (torch_type.find("bfloat16") != std::string::npos) return "bf16";
  if (torch_type.find("half") != std::string::npos) return "fp16";
  if (torch_type.find("float8") != std::string::npos) return "fp8";
  if (torch_type == "float") return "fp32";
  return "";
}

// Input limits (docs/limits.md): a tensor dimension below 2^31 and a GEMM side below 2^40, so that the
// shape's products stay exact.
constexpr std::int64_t kMaxTensorDim = std::int64_t{1} << 31;
constexpr std::int64_t kMaxGemmSide = std::int64_t{1} << 40;

/** The product of all dimensions but the last; 0 (no shape) past kMaxGemmSide. */
std::int64_t product_but_last(const std::vector<std::int64_t>& d) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] != 0 && p > kMaxGemmSide / d[i]) return 0;
    p *= d[i];
  }
  return p;
}

// m, n, k of a recorded matrix-multiply op, from its input shapes.
std::optional<TraceGemmShape> gemm_shape(const traces::CpuOp& op) {
  auto input = [&](std::size_t i) {
    if (i >= op.inputs.size()) return std::vector<std::int64_t>{};
    const auto& d = op.inputs[i];
    const bool in_range = std::all_of(d.begin(), d.end(), [](std::int64_t x) { return x < kMaxTensorDim; });
    return in_range ? d : std::vector<std::int64_t>{};
  };
  const std::vector<std::int64_t> a = input(op.name == "aten::addmm" ? 1 : 0);
  const std::vector<std::int64_t> b = input(op.name == "aten::addmm" ? 2 : 1);
  TraceGemmShape s;
  if (op.name == "aten::mm" || op.name == "aten::matmul") {
    if (a.size() < 2 || b.size() < 2) return std::nullopt;
    s = {product_but_last(a), b.back(), a.back(), ""};
  } else if (op.name == "aten::addmm") {
    if (a.size() != 2 || b.size() != 2) return std::nullopt;
    s = {a[0], b[1], a[1], ""};
  } else if (op.name == "aten::bmm") {
    if (a.size() != 3 || b.size() != 3) return std::nullopt;
    s = {product_but_last(a), b[2], a[2], ""};
  } else if (op.name == "aten::linear") {
    if (a.size() < 2 || b.size() != 2) return std::nullopt;  // weight [n, k]
    s = {product_but_last(a), b[0], a.back(), ""};
  } else {
    return std::nullopt;
  }
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
  for (const std::string& t : op.input_types) {
    if (!dtype_of(t).empty()) {
      s.dtype = dtype_of(t);
      break;
    }
  }
  return s;
}

}  // namespace

KinetoTrace trace_kernels(const traces::TorchTrace& trace) {
  std::map<std::int64_t, const traces::CpuOp*> cpu_ops;  // External id -> the first CPU op with it
  for (const traces::CpuOp& op : trace.cpu_ops) {
    if (op.external_id >= 0) cpu_ops.emplace(op.external_id, &op);
  }
  KinetoTrace out;
  out.file = trace.file;
  for (const traces::GpuEvent& g : trace.gpu) {
    if (g.kind == traces::GpuKind::MEMCPY || g.kind == traces::GpuKind::MEMSET) continue;
    TraceKernel kernel;
    kernel.name = g.name;
    kernel.kind = g.kind;
    kernel.duration_s = g.dur_us * 1e-6;
    auto op = cpu_ops.find(g.external_id);
    if (op != cpu_ops.end()) kernel.gemm = gemm_shape(*op->second);
    out.kernels.push_back(std::move(kernel));
  }
  return out;
}

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file) {
  return trace_kernels(traces::parse_torch_trace(text, file));
}

KinetoTrace load_kineto_trace(const std::string& path) {
  return trace_kernels(traces::load_torch_trace(path));
}

}  // namespace moesim::calibrate
