// The `farskip` schedule: FarSkip-Collective's rewired skip connections (FarSkip paper §3-4, Primus flags).
#include "LayerStack.hpp"
#include "OverlapBound.hpp"

namespace moesim::schedules::families {

namespace {
/** FarSkip's own runs print whether Eq. (9), which every all-to-all result carries, lets them hide it all. */
std::vector<FigureGroup> eq9_line(const SimulationResult& r) {
  const FigureGroup* eq9 = r.figure_group("farskip_eq9");
  if (eq9 == nullptr) return {};
  FigureGroup line;
  line.summary.push_back(detail::farskip_eq9_line(*eq9));
  return {line};
}
}  // namespace

void farskip(ScheduleRegistry& registry) {
  std::vector<ScheduleOption> options = {
      {"mode", "overlap|simple", "overlap (default) or Primus' simple reference: FarSkip wiring, no overlap"},
      {"parts", "all|attn_only|mlp_only",
       "all (default); attn_only: only the attention input skips the MoE output; mlp_only: only the MoE "
       "input skips the attention output"},
      {"layers", "all|first:N|last:N", "which layers are converted (default all)"}};
  for (const ScheduleOption& o : detail::layer_stack_options()) options.push_back(o);
  Schedule schedule;
  schedule.name = "farskip";
  schedule.help =
      "FarSkip-Collective connectivity (AMD, 2025): Dispatch overlaps core attention, Combine "
      "overlaps shared experts and the next layer's qkv; in prefill each all-reduce is waited "
      "for only before the next sub-block of its kind";
  schedule.options = std::move(options);
  schedule.validate = [](const Scenario& s) { detail::validate_layer_stack(s, true); };
  schedule.build = [](const Scenario& s) { return detail::build_layer_stack(s, true); };
  schedule.chunks = [](const Scenario& s) { return detail::layer_stack_chunks(s, true); };
  schedule.figures = eq9_line;
  registry.add(std::move(schedule));
}

}  // namespace moesim::schedules::families
