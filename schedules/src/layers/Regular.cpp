// The `regular` schedule: MoE layers whose collectives block (FarSkip paper §2.1, Megatron / vLLM style).
#include "LayerStack.hpp"

namespace moesim::schedules::families {

void regular(ScheduleRegistry& registry) {
  Schedule schedule;
  schedule.name = "regular";
  schedule.help =
      "Blocking MoE communication: Dispatch/Combine all-to-alls (training) or TP/EP all-reduces "
      "(prefill); shared experts overlap Combine";
  schedule.options = detail::layer_stack_options();
  schedule.validate = [](const Scenario& s) { detail::validate_layer_stack(s, false); };
  schedule.build = [](const Scenario& s) { return detail::build_layer_stack(s, false); };
  schedule.chunks = [](const Scenario& s) { return detail::layer_stack_chunks(s, false); };
  registry.add(std::move(schedule));
}

}  // namespace moesim::schedules::families
