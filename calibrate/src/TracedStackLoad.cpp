#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "moesim/calibrate/ImplementationLearner.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/traces/TorchStackRecord.hpp"

// A traced run as the learner takes it: the trace's attributed step and the run's configuration, from the run
// record beside the trace (kernels/torch_stacks, own_records) or the flags given in its place.
namespace moesim::calibrate {
namespace {

std::string flag_value(const char* flag, double ms) {
  std::ostringstream out;
  out << flag << ' ' << std::fixed << std::setprecision(3) << ms;
  return out.str();
}

constexpr std::int64_t kMaxDim = std::int64_t{1} << 30;  // past any real batch, sequence or token count

// Tokens per rank and sequence length of the traced step, from its first layer's forward: the attention
// kernel's op reads (batch, heads, seq, head_dim); without one (an attention of plain matmuls), the q/k/v
// projections' rows are the tokens and the sequence is unknown (0).
std::optional<std::pair<std::int64_t, std::int64_t>> tokens_and_seq(const traces::AttributedStep& step) {
  std::optional<std::pair<std::int64_t, std::int64_t>> from_rows;
  for (const traces::OpCall& c : step.calls) {
    if (c.layer != 0 || c.backward) continue;
    for (const traces::TracedItem& item : c.items) {
      if (item.inputs.empty()) continue;
      const auto& x = item.inputs.front();
      const auto sane = [](std::int64_t d) { return d > 0 && d <= kMaxDim; };
      if (c.op == "attn_core" && x.size() == 4 && item.cpu_op.find("attention") != std::string::npos &&
          sane(x[0]) && sane(x[2]))
        return std::pair{x[0] * x[2], x[2]};
      if (c.op == "attn_qkv" && item.gpu.kind == traces::GpuKind::GEMM && x.size() >= 2 && !from_rows) {
        std::int64_t rows = 1;
        for (std::size_t i = 0; i + 1 < x.size() && rows > 0; ++i)
          rows = sane(x[i]) && rows <= kMaxDim ? rows * x[i] : 0;
        if (rows > 0 && rows <= kMaxDim) from_rows = std::pair{rows, std::int64_t{0}};
      }
    }
  }
  return from_rows;
}

bool has_collectives(const traces::AttributedStep& step) {
  for (const traces::OpCall& c : step.calls)
    for (const traces::TracedItem& item : c.items)
      if (item.kind == traces::TracedItem::Kind::LAUNCH && item.gpu.kind == traces::GpuKind::NCCL)
        return true;
  return false;
}

}  // namespace

TracedStack load_traced_stack(const std::string& trace_file, const TracedRunConfig& given) {
  TracedStack s;
  s.label = trace_file;
  s.step = traces::attribute_step(traces::load_torch_trace(trace_file));
  std::optional<traces::TorchStackRecord> record;
  if (auto beside = traces::record_beside_trace(trace_file))
    record = traces::read_torch_stack_record(*beside);
  auto need = [&](const char* flag) {
    return ConfigError(trace_file, "",
                       std::string("has no run record beside it (NAME.json): give the traced run's ") + flag);
  };
  const std::string model = !given.model.empty() ? given.model : record ? record->model_source() : "";
  if (model.empty()) throw need("--model");
  s.model = models::load_model(model);
  s.ep = given.ep > 0 ? given.ep : record ? record->ep : 0;
  if (s.ep <= 0 && !has_collectives(s.step)) {  // one process: no expert parallelism
    s.ep = 1;
    s.read_from_trace += "EP 1 (no collective kernels)";
  }
  if (s.ep <= 0) throw need("--ep");
  s.tokens = given.tokens > 0 ? given.tokens : record ? record->tokens : 0;
  s.seq = given.seq > 0 ? given.seq : record ? record->seq : 0;
  if (s.tokens <= 0 || s.seq <= 0) {
    if (const auto traced = tokens_and_seq(s.step)) {
      if (s.tokens <= 0) s.tokens = traced->first;
      if (s.seq <= 0) s.seq = traced->second;
      s.read_from_trace += std::string(s.read_from_trace.empty() ? "" : ", ") + "tokens " +
                           std::to_string(s.tokens) +
                           (traced->second > 0 ? ", seq " + std::to_string(s.seq) : "") +
                           " (the first layer's attention inputs)";
    }
  }
  if (s.tokens <= 0) throw need("--tokens");
  if (s.seq <= 0) s.seq = s.tokens;
  if (record) {
    s.issue_ms = record->issue_ms_p50;
    s.forward_issue_ms = record->forward_issue_ms_p50;
    s.cpu_model = record->cpu_model;
    s.host_probe_us = record->host_probe_us_rank0;
  }
  if (given.host_probe_us > 0) s.host_probe_us = given.host_probe_us;
  if (given.issue_ms > 0) s.issue_ms = given.issue_ms;
  if (given.forward_issue_ms > 0) s.forward_issue_ms = given.forward_issue_ms;
  if (given.forward_issue_ms > 0 && s.issue_ms <= 0)
    throw ConfigError(trace_file, "",
                      "--untraced-forward-ms needs the whole step's: give --untraced-issue-ms");
  if (given.forward_issue_ms > 0 && !(given.forward_issue_ms < s.issue_ms))
    throw ConfigError(trace_file, "",
                      flag_value("--untraced-forward-ms", given.forward_issue_ms) +
                          ": expected less than the step's untraced issue time (--untraced-issue-ms, or the "
                          "run record's)");
  return s;
}

}  // namespace moesim::calibrate
