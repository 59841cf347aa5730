#include "OverlapBound.hpp"

#include <fmt/format.h>

#include <map>

namespace moesim::schedules::detail {

namespace {
struct Eq9Terms {
  double dispatch_ms = 0, combine_ms = 0, layer_compute_ms = 0, routed_ms = 0, gate_ms = 0;
};
}  // namespace

std::optional<FigureGroup> farskip_eq9(const SimulationResult& r) {
  if (r.scenario.parallel.moe_comm != MoeComm::ALLTOALL) return std::nullopt;
  std::map<int, Eq9Terms> per_layer;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.rank != 0 || op.kind == sim::OpKind::HOST) continue;
    const int layer = op.origin.layer;
    if (op.origin.backward || layer < 0 || !r.scenario.model.is_moe_layer(layer)) continue;
    const auto& t = r.run.ops[i];
    auto& b = per_layer[layer];
    if (op.kind != sim::OpKind::COLLECTIVE && op.kind != sim::OpKind::KERNEL) continue;
    if (op.is_comm()) {
      double ms = static_cast<double>(t.end - t.data_start) / 1e6;
      if (op.category == "dispatch") b.dispatch_ms += ms;
      if (op.category == "combine") b.combine_ms += ms;
      continue;
    }
    double ms = static_cast<double>(t.end - t.start) / 1e6;
    b.layer_compute_ms += ms;
    if (op.category == "routed_experts") b.routed_ms += ms;
    if (op.category == "gate") b.gate_ms += ms;
  }
  if (per_layer.empty()) return std::nullopt;
  Eq9Terms mean;
  for (const auto& [layer, b] : per_layer) {
    mean.dispatch_ms += b.dispatch_ms;
    mean.combine_ms += b.combine_ms;
    mean.layer_compute_ms += b.layer_compute_ms;
    mean.routed_ms += b.routed_ms;
    mean.gate_ms += b.gate_ms;
  }
  const double n = static_cast<double>(per_layer.size());
  for (double* v :
       {&mean.dispatch_ms, &mean.combine_ms, &mean.layer_compute_ms, &mean.routed_ms, &mean.gate_ms})
    *v /= n;
  const double comm = mean.dispatch_ms + mean.combine_ms;
  const double overlappable = mean.layer_compute_ms - (mean.routed_ms + mean.gate_ms);
  const bool holds = comm <= overlappable;
  FigureGroup g;
  g.key = "farskip_eq9";
  g.values = {{"dispatch_plus_combine_ms", comm, true},
              {"overlappable_ms", overlappable, true},
              {"layer_compute_ms", mean.layer_compute_ms, true},
              {"routed_ms", mean.routed_ms, true},
              {"gate_ms", mean.gate_ms, true},
              {"holds", holds}};
  return g;
}

std::string farskip_eq9_line(const FigureGroup& g) {
  const bool holds = g.number("holds").value_or(0) != 0;
  return fmt::format(
      "# FarSkip Eq. (9), mean MoE layer: Dispatch+Combine {:.3f} ms {} overlappable compute {:.3f} ms "
      "(layer compute {:.3f} - routed {:.3f} - gate {:.3f}): {}",
      g.number("dispatch_plus_combine_ms").value_or(0), holds ? "<=" : ">",
      g.number("overlappable_ms").value_or(0), g.number("layer_compute_ms").value_or(0),
      g.number("routed_ms").value_or(0), g.number("gate_ms").value_or(0),
      holds ? "holds" : "violated, comm cannot all hide");
}

}  // namespace moesim::schedules::detail
