// The `1f1b` and `interleaved` pipeline schedules: Megatron-LM's one-forward-one-backward pipeline and its
// interleaved variant with virtual stages (Narayanan et al., SC'21, §2.2), as schedules.py orders them.
#include <algorithm>

#include "moesim/schedules/Registry.hpp"

namespace moesim::schedules::families {

namespace {
using Kind = PipelineAction::Kind;

PipelineAction forward(int slot, int micro_batch) {
  return PipelineAction::chunk(Kind::FORWARD, slot, micro_batch);
}
PipelineAction backward(int slot, int micro_batch) {
  return PipelineAction::chunk(Kind::BACKWARD, slot, micro_batch);
}

/**
 * The steady state pairs forward k + warmup with backward k; with --fb-overlap the pair is one interleaved
 * action (Megatron's combined 1F1B with --overlap-moe-expert-parallel-comm).
 */
void steady(std::vector<PipelineAction>& order, const Scenario& s, PipelineAction f, PipelineAction b) {
  if (s.fb_overlap) {
    order.push_back(PipelineAction::pair(f.slot, f.micro_batch, b.slot, b.micro_batch));
  } else {
    order.push_back(f);
    order.push_back(b);
  }
}

/*
 * One stage of 1F1B (P stages, M micro-batches): P - s - 1 warm-up forwards, then one forward and one
 * backward alternating, then the remaining backwards.
 *
 *   stage 0: F0 F1 F2 F3 B0 F4 B1 F5 B2 ... B5
 *   stage 3:          F0 B0 F1 B1 F2 B2 ...
 */
std::vector<PipelineAction> one_f_one_b(const Scenario& s, int stage) {
  const int P = s.parallel.pp, M = s.workload.micro_batches;
  std::vector<PipelineAction> order;
  if (s.workload.phase != Phase::TRAIN) {
    for (int m = 0; m < M; ++m) order.push_back(forward(0, m));
    return order;
  }
  const int warmup = std::min(P - stage - 1, M);
  for (int m = 0; m < warmup; ++m) order.push_back(forward(0, m));
  for (int k = 0; k < M - warmup; ++k) steady(order, s, forward(0, warmup + k), backward(0, k));
  for (int k = M - warmup; k < M; ++k) order.push_back(backward(0, k));
  return order;
}

/*
 * Interleaved 1F1B with V model chunks per stage (chunk v of stage s is model part v·P + s). Virtual
 * micro-batch k runs model chunk (k mod PV) / P (backward: counted from the last chunk) of micro-batch
 * (k / PV)·P + k mod P; the warm-up is 2(P - s - 1) + (V - 1)P virtual micro-batches (all of them when M =
 * P).
 */
std::vector<PipelineAction> interleaved(const Scenario& s, int stage) {
  const int P = s.parallel.pp, V = s.parallel.vpp, M = s.workload.micro_batches;
  const int total = M * V;
  auto chunk_of = [&](int k, bool is_forward) {
    const int chunk = (k % (P * V)) / P;
    return is_forward ? chunk : V - 1 - chunk;
  };
  auto micro_batch_of = [&](int k) { return (k / (P * V)) * P + k % P; };
  auto f = [&](int k) { return forward(chunk_of(k, true), micro_batch_of(k)); };
  auto b = [&](int k) { return backward(chunk_of(k, false), micro_batch_of(k)); };
  std::vector<PipelineAction> order;
  if (s.workload.phase != Phase::TRAIN) {
    for (int k = 0; k < total; ++k) order.push_back(f(k));
    return order;
  }
  const int warmup = M == P ? total : std::min(total, (P - stage - 1) * 2 + (V - 1) * P);
  for (int k = 0; k < warmup; ++k) order.push_back(f(k));
  for (int k = 0; k < total - warmup; ++k) steady(order, s, f(warmup + k), b(k));
  for (int k = total - warmup; k < total; ++k) order.push_back(b(k));
  return order;
}

}  // namespace

void pipeline_megatron(ScheduleRegistry& registry) {
  PipelineSchedule plain;
  plain.name = "1f1b";
  plain.help =
      "Megatron's one-forward-one-backward pipeline: P - s - 1 warm-up forwards on stage s, then forward "
      "and backward alternate (bubble (P - 1)(F + B)); with --pp 1 plain gradient accumulation";
  plain.validate = [](const Scenario& s) {
    require_schedule(s.parallel.vpp == 1,
                     "--pp-schedule 1f1b runs one model chunk per stage: use --pp-schedule "
                     "interleaved for --vpp " +
                         std::to_string(s.parallel.vpp));
  };
  plain.parts = [](const Scenario& s) { return s.parallel.pp; };
  plain.place = [](const Scenario&, int, int part) { return PipelinePlace{part, 0}; };
  plain.part_at = [](const Scenario&, int, int stage, int) { return stage; };
  plain.order = one_f_one_b;
  registry.add(std::move(plain));

  PipelineSchedule virtual_stages;
  virtual_stages.name = "interleaved";
  virtual_stages.help =
      "Megatron's interleaved 1F1B: --vpp V model chunks per stage (chunk v of stage s is part vP + s), "
      "bubble (P - 1)(F + B)/V at V times the point-to-point transfers";
  virtual_stages.validate = [](const Scenario& s) {
    require_schedule(s.parallel.vpp >= 2, "--pp-schedule interleaved needs --vpp >= 2");
    require_schedule(s.workload.micro_batches % s.parallel.pp == 0,
                     "--pp-schedule interleaved needs --micro-batches divisible by --pp (Megatron's rule)");
  };
  virtual_stages.parts = [](const Scenario& s) { return s.parallel.pp * s.parallel.vpp; };
  virtual_stages.place = [](const Scenario& s, int, int part) {
    return PipelinePlace{part % s.parallel.pp, part / s.parallel.pp};
  };
  virtual_stages.part_at = [](const Scenario& s, int, int stage, int slot) {
    return slot * s.parallel.pp + stage;
  };
  virtual_stages.order = interleaved;
  registry.add(std::move(virtual_stages));
}

}  // namespace moesim::schedules::families
