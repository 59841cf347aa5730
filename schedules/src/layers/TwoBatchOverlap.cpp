// The `tbo` schedule: two-batch overlap (DeepSeek-V3 report §3.4 and its inference system; SGLang's TBO,
// LMSYS blog 2025-05-05): each micro-batch runs as two halves whose layers interleave, one half's attention
// and experts under the other half's Dispatch and Combine.
#include "LayerStack.hpp"
#include "LayerUnits.hpp"
#include "moesim/common/Error.hpp"
#include "step/Chunks.hpp"
#include "step/StepBuilder.hpp"

namespace moesim::schedules::families {

namespace {
using detail::ChunkCall;
using detail::UnitSplit;
using detail::UnitStream;

/** Half of each rank's tokens, whole sequences each (decode: half of the sequences). */
Scenario half_of(const Scenario& s) {
  Scenario half = s;
  half.workload.tokens = s.workload.tokens / 2;
  return half;
}

/*
 * Each chunk is two halves A and B of the micro-batch, their units alternating (LayerUnits.hpp):
 *
 *   prefill / train:  A.attn ─►D_A  B.attn ─►D_B  A.mlp(D_A) ─►C_A  B.mlp(D_B) ─►C_B  A.attn(next, C_A) ...
 *   decode:           A.attn0 B.attn0 A.attn1 ─►D_A B.attn1 ─►D_B A.shared B.shared A.routed ─►C_A ...
 *   backward:         the same alternation of the two halves' backward units
 */
class TwoBatchChunks : public detail::ChunkEmitter {
 public:
  explicit TwoBatchChunks(const Scenario& s)
      : ChunkEmitter(half_of(s), detail::plan_traffic(detail::routed_scenario(half_of(s))),
                     sim::Transport::SM_KERNEL, detail::all_to_all_algorithm(s.options, s.hw.gpu.sm_count)),
        // DeepEP's low-latency decode kernels need no host sync: nothing waits for split sizes on the host.
        sync_(s.workload.phase != Phase::DECODE && detail::sync_splits(s.options)),
        split_(s.workload.phase == Phase::DECODE ? UnitSplit::DECODE : UnitSplit::ATTENTION_MLP) {}

  void emit(detail::ProgramBuilder& b, const detail::Chunk& chunk,
            const detail::LayerHooks& hooks) const override {
    const std::vector<sim::OpId> entry = b.take_waits();
    const std::string tag = b.name_tag();
    const int micro_batch = b.micro_batch();
    // The first half meets each layer first (its parameters' gather), the second finishes it last
    // (gradients).
    const int layers = simulated_layers(scenario());
    UnitStream a(scenario().model, ChunkCall{chunk, micro_batch, tag + "a.", entry},
                 {hooks.before_forward, {}}, sync_, split_, layers);
    UnitStream c(scenario().model, ChunkCall{chunk, micro_batch, tag + "b.", entry},
                 {{}, hooks.after_backward}, sync_, split_, layers);
    auto [first, second] = detail::interleave(b, a, c);
    b.set_micro_batch(micro_batch, tag);
    for (sim::OpId op : first) b.wait(op);
    for (sim::OpId op : second) b.wait(op);
  }

 private:
  bool sync_;
  UnitSplit split_;
};

void validate_tbo(const Scenario& s) {
  detail::validate_layer_stack(s, false);
  if (s.parallel.moe_comm != MoeComm::ALLTOALL)
    throw ScheduleError("--schedule tbo hides Dispatch and Combine all-to-alls: use --moe-comm alltoall");
  const auto sequences = s.workload.tokens / s.workload.seq_len;
  if (sequences % 2 != 0 || (s.parallel.tp > 1 && (s.workload.tokens / 2) % s.parallel.tp != 0))
    throw ScheduleError(
        "--schedule tbo splits each rank's sequences into two halves: it needs an even number (" +
        std::to_string(sequences) + " per rank)");
}
}  // namespace

void tbo(ScheduleRegistry& registry) {
  Schedule schedule;
  schedule.name = "tbo";
  schedule.help =
      "Two-batch overlap (DeepSeek inference, SGLang TBO): two half-batches interleave, one's attention and "
      "experts under the other's Dispatch/Combine; decode cuts attention in two (5-stage overlap); training "
      "too. Regular layers (FarSkip already hides the same all-to-alls within one batch)";
  schedule.options = {
      {"sync_splits", "on|off",
       "host sync for the all-to-all split sizes before each Dispatch (default on; decode: never, "
       "as DeepEP's low-latency kernels)"}};
  for (const ScheduleOption& o : detail::layer_stack_options()) {
    if (o.key == "a2a" || o.key == "a2a_sms") schedule.options.push_back(o);
  }
  schedule.validate = validate_tbo;
  schedule.chunks = [](const Scenario& s) -> std::shared_ptr<const detail::ChunkEmitter> {
    return std::make_shared<TwoBatchChunks>(s);
  };
  schedule.build = [](const Scenario& s) {
    return detail::build_step(s, std::make_shared<TwoBatchChunks>(s));
  };
  registry.add(std::move(schedule));
}

}  // namespace moesim::schedules::families
