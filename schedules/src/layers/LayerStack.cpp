#include "LayerStack.hpp"

#include "Layers.hpp"
#include "moesim/common/Error.hpp"

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

void validate_layer_stack(const Scenario& s) {
  const auto& p = s.parallel;
  if (p.moe_comm == MoeComm::ALLREDUCE) {
    if (p.tp != p.ep)
      throw ScheduleError("--moe-comm allreduce runs TP attention on the EP ranks: --tp must equal --ep");
  } else if (p.tp != 1) {
    throw ScheduleError(
        "--moe-comm alltoall models EP without attention TP (as the FarSkip paper's training setup): use "
        "--tp 1");
  }
}

BuiltProgram build_layer_stack(const Scenario& s, bool farskip) {
  const int layers = simulated_layers(s);
  auto modes = layer_modes(farskip, s.options, layers);
  const bool sync = sync_splits(s.options);
  auto traffic = plan_traffic(s);
  const bool quantized = quantized_allreduce(s.options);
  if (quantized) {
    if (s.parallel.moe_comm != MoeComm::ALLREDUCE)
      throw ConfigError("", "--opt",
                        "allreduce=quantized: applies to --moe-comm allreduce (prefill all-reduces)");
    traffic.allreduce_bytes = static_cast<double>(s.workload.tokens) * static_cast<double>(s.model.hidden);
  }
  BuiltProgram out;
  out.program = std::make_shared<sim::Program>(group_size(s), traffic.symmetric);
  const auto transport =
      copy_engine_transport(s.options) ? sim::Transport::COPY_ENGINE : sim::Transport::SM_KERNEL;
  ProgramBuilder b(s, traffic, *out.program, transport, all_to_all_algorithm(s.options, s.hw.gpu.sm_count));
  for (int r : out.program->simulated_ranks()) {
    b.begin_rank(r);
    if (s.parallel.moe_comm == MoeComm::ALLREDUCE) {
      allreduce_forward(b, modes, quantized);
    } else {
      alltoall_forward(b, modes, sync);
      if (s.workload.phase == Phase::TRAIN) alltoall_backward(b, modes);
    }
  }
  out.flops_rank0 = b.flops(0);
  out.layers = layers;
  // All-reduce style: every rank holds the same replicated batch.
  const int holders = s.parallel.moe_comm == MoeComm::ALLREDUCE ? 1 : group_size(s);
  out.tokens_per_step = static_cast<double>(s.workload.tokens) * holders;
  return out;
}

}  // namespace moesim::schedules::detail
