#include "LayerStack.hpp"

#include "LayerUnits.hpp"
#include "Layers.hpp"
#include "moesim/common/Error.hpp"
#include "step/Chunks.hpp"
#include "step/StepBuilder.hpp"

namespace moesim::schedules::detail {

std::vector<ScheduleOption> layer_stack_options() {
  return {
      {"sync_splits", "on|off",
       "Megatron's host sync for the all-to-all split sizes before Dispatch (default on)"},
      {"shared_overlap", "on|off",
       "unconverted layers run shared experts under Combine (default on; Megatron's default is off)"},
      {"transport", "nccl|copy_engine",
       "all-to-alls as NCCL/RCCL kernels (default; they hold SMs) or as peer copies by the copy engines (no "
       "SMs; needs the profile's copy_engine all_to_all tables)"},
      {"allreduce", "bf16|quantized",
       "prefill all-reduces (--moe-comm allreduce) in bf16 (default) or quantized: 1-byte payload with a "
       "quantize and a dequantize pass around each (vLLM's quantized custom all-reduce on ROCm)"},
      {"a2a", "flat|hierarchical",
       "Dispatch/Combine as NCCL's flat all-to-all (default) or DeepEP-style: a token sent once per GPU "
       "(and across nodes once per node, by RDMA to the same local index, then NVLink forwarding; combine "
       "reversed), the legs pipelined"},
      {"a2a_sms", "N",
       "SMs each all-to-all kernel holds, taken from compute (default: the profile's comm_sms; DeepEP's "
       "normal kernels: 20)"}};
}

void validate_layer_stack(const Scenario& s, bool farskip) {
  const auto& p = s.parallel;
  if (p.moe_comm == MoeComm::ALLREDUCE) {
    if (p.tp != p.ep)
      throw ScheduleError("--moe-comm allreduce runs TP attention on the EP ranks: --tp must equal --ep");
    if (s.optimizer != Optimizer::NONE)
      throw ScheduleError("--moe-comm allreduce is modeled for inference (forward only): no --optimizer");
  } else if (p.tp != 1) {
    if (farskip)
      throw ScheduleError(
          "--schedule farskip models EP without attention TP under --moe-comm alltoall: use --tp 1");
    if (p.ep % p.tp != 0 || s.workload.tokens % p.tp != 0)
      throw ScheduleError(
          "--tp " + std::to_string(p.tp) +
          " (attention TP with sequence parallelism) must divide --ep and the tokens of a TP group");
  }
}

Scenario routed_scenario(const Scenario& s) {
  Scenario routed = s;
  if (s.parallel.moe_comm == MoeComm::ALLTOALL && s.parallel.tp > 1) {
    // Sequence parallelism: each rank routes its 1/tp share of its TP group's tokens.
    routed.workload.tokens = s.workload.tokens / s.parallel.tp;
    routed.workload.seq_len = std::min(routed.workload.seq_len, routed.workload.tokens);
    routed.parallel.tp = 1;
  }
  return routed;
}

namespace {
/** What the stack's collectives carry: the routed tokens' all-to-alls, or (quantized) 1-byte all-reduces. */
TrafficPlan stack_traffic(const Scenario& s) {
  auto traffic = plan_traffic(routed_scenario(s));
  if (quantized_allreduce(s.options)) {
    if (s.parallel.moe_comm != MoeComm::ALLREDUCE)
      throw ConfigError("", "--opt",
                        "allreduce=quantized: applies to --moe-comm allreduce (prefill all-reduces)");
    traffic.allreduce_bytes = static_cast<double>(s.workload.tokens) * static_cast<double>(s.model.hidden);
  }
  return traffic;
}

/** The regular and FarSkip layers as chunks of a pipeline step. */
class LayerStackChunks : public ChunkEmitter {
 public:
  LayerStackChunks(const Scenario& s, bool farskip)
      : ChunkEmitter(
            s, stack_traffic(s),
            copy_engine_transport(s.options) ? sim::Transport::COPY_ENGINE : sim::Transport::SM_KERNEL,
            all_to_all_algorithm(s.options, s.hw.gpu.sm_count)),
        model_(s.model),
        modes_(layer_modes(farskip, s.options, simulated_layers(s))),
        sync_(sync_splits(s.options)),
        allreduce_(s.parallel.moe_comm == MoeComm::ALLREDUCE),
        quantized_(quantized_allreduce(s.options)),
        farskip_(farskip) {}

  void emit(ProgramBuilder& b, const Chunk& chunk, const LayerHooks& hooks) const override {
    if (allreduce_) {
      allreduce_forward(b, modes_, chunk.layers, quantized_, hooks);
    } else if (chunk.backward) {
      alltoall_backward(b, modes_, chunk.layers, hooks);
    } else {
      alltoall_forward(b, modes_, sync_, chunk.layers, hooks);
    }
  }

  // FarSkip's layers already overlap their own all-to-alls; their rewired order is not cut into units.
  bool pairs() const override { return !allreduce_ && !farskip_; }

  PairOutputs emit_pair(ProgramBuilder& b, const ChunkCall& forward, const ChunkCall& backward,
                        const LayerHooks& hooks) const override {
    const int layers = static_cast<int>(modes_.size());
    UnitStream f(model_, forward, {hooks.before_forward, {}}, sync_, UnitSplit::ATTENTION_MLP, layers);
    UnitStream g(model_, backward, {{}, hooks.after_backward}, sync_, UnitSplit::ATTENTION_MLP, layers);
    return interleave(b, f, g);
  }

 private:
  models::ModelSpec model_;
  std::vector<LayerMode> modes_;
  bool sync_;
  bool allreduce_;
  bool quantized_;
  bool farskip_;
};
}  // namespace

std::shared_ptr<const ChunkEmitter> layer_stack_chunks(const Scenario& s, bool farskip) {
  return std::make_shared<LayerStackChunks>(s, farskip);
}

BuiltProgram build_layer_stack(const Scenario& s, bool farskip) {
  const int layers = simulated_layers(s);
  auto modes = layer_modes(farskip, s.options, layers);
  const bool sync = sync_splits(s.options);
  auto traffic = stack_traffic(s);
  const bool quantized = quantized_allreduce(s.options);
  BuiltProgram out;
  out.program = std::make_shared<sim::Program>(group_size(s), traffic.symmetric);
  const auto transport =
      copy_engine_transport(s.options) ? sim::Transport::COPY_ENGINE : sim::Transport::SM_KERNEL;
  ProgramBuilder b(s, traffic, *out.program, transport, all_to_all_algorithm(s.options, s.hw.gpu.sm_count));
  b.for_each_rank(b.sequence_parallel(), [&](int) {
    if (s.parallel.moe_comm == MoeComm::ALLREDUCE) {
      allreduce_forward(b, modes, all_layers(modes), quantized);
    } else {
      alltoall_forward(b, modes, sync, all_layers(modes));
      if (s.workload.phase == Phase::TRAIN) alltoall_backward(b, modes, all_layers(modes));
    }
  });
  out.flops_rank0 = b.flops(0);
  out.layers = layers;
  // All-reduce style: every rank holds the same replicated batch; all-to-all: each TP group holds its own.
  const int holders = s.parallel.moe_comm == MoeComm::ALLREDUCE ? 1 : group_size(s) / s.parallel.tp;
  out.tokens_per_step = completed_tokens_per_rank(s) * holders;
  return out;
}

}  // namespace moesim::schedules::detail
