#include <iomanip>
#include <optional>
#include <sstream>

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
  if (s.ep <= 0) throw need("--ep");
  s.tokens = given.tokens > 0 ? given.tokens : record ? record->tokens : 0;
  if (s.tokens <= 0) throw need("--tokens");
  s.seq = given.seq > 0 ? given.seq : record ? record->seq : s.tokens;
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
