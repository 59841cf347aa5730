#include "TorchStackOps.hpp"

#include <map>

#include "moesim/traces/OpAttribution.hpp"

namespace moesim::validate::detail {
namespace {

// The op a simulated op belongs to, as the trace names it: collectives' ".bwd" goes into the pass.
std::string op_name(const sim::OpOrigin& origin) {
  const std::string suffix = ".bwd";
  const std::string& b = origin.block;
  if (b.size() > suffix.size() && b.compare(b.size() - suffix.size(), suffix.size(), suffix) == 0)
    return b.substr(0, b.size() - suffix.size());
  return b;
}

}  // namespace

std::vector<OpTimes> compare_ops(const traces::TorchStackRecord& record,
                                 const schedules::SimulationResult& result) {
  std::vector<OpTimes> rows;
  std::map<std::string, std::size_t> index;
  auto row = [&](const std::string& op, bool backward) -> OpTimes& {
    auto [it, fresh] = index.try_emplace(op + (backward ? ".bwd" : ""), rows.size());
    if (fresh) rows.push_back({op, backward});
    return rows[it->second];
  };
  const traces::AttributedStep step = traces::attribute_step(traces::load_torch_trace(record.traces.front()));
  const traces::ProfilerHostScale host_scale =
      traces::profiler_host_scale(step, record.issue_ms_p50, record.forward_issue_ms_p50)
          .value_or(traces::ProfilerHostScale{});
  for (bool backward : {false, true}) {
    for (const traces::OpCall& call : step.calls) {
      if (call.backward != backward) continue;
      OpTimes& r = row(call.op, backward);
      for (const traces::TracedItem& item : call.items) {
        r.measured_host_ms += item.host_us * host_scale.of(backward) * 1e-3;
        if (item.kind != traces::TracedItem::Kind::LAUNCH) continue;
        ++r.measured_kernels;
        r.measured_gpu_ms += item.gpu.dur_us * 1e-3;
      }
    }
  }
  if (!step.unattributed.empty() || step.unattributed_syncs > 0) {
    // What no op claims (the model's own ops are model_inputs and final_norm): the host time before it,
    // scaled as the forward's.
    OpTimes& r = row(kOutsideOps, false);
    for (const traces::UnattributedKernels& u : step.unattributed) r.measured_kernels += u.count;
    r.measured_gpu_ms = step.unattributed_gpu_us() * 1e-3;
    r.measured_host_ms = step.unattributed_host_us * host_scale.forward * 1e-3;
  }
  const sim::Program& program = *result.program;
  const int rank = program.simulated_ranks().front();
  for (std::size_t id = 0; id < program.ops().size(); ++id) {
    const sim::Op& op = program.ops()[id];
    if (op.rank != rank || op.origin.block.empty()) continue;
    const sim::OpTiming& t = result.run.ops[id];
    OpTimes& r = row(op_name(op.origin), op.origin.backward);
    r.predicted_host_ms += op.host_ns * 1e-6;
    if (op.kind == sim::OpKind::HOST) continue;
    ++r.predicted_kernels;
    if (t.end >= 0 && t.start >= 0) r.predicted_gpu_ms += static_cast<double>(t.end - t.start) * 1e-6;
  }
  return rows;
}

}  // namespace moesim::validate::detail
