#include "Schedule.hpp"

#include <sstream>
#include <stdexcept>

namespace moesim::kernels::layer {
namespace {

class StepList {
 public:
  void compute(int l, Op op) { steps_.push_back({StepKind::COMPUTE, l, op, Comm::DISPATCH}); }
  void compute(int l, std::initializer_list<Op> ops) {
    for (Op op : ops) compute(l, op);
  }
  void collective(int l, Comm c) { steps_.push_back({StepKind::COLLECTIVE, l, Op::ATTN_NORM, c}); }
  void wait(int l, Comm c) { steps_.push_back({StepKind::WAIT, l, Op::ATTN_NORM, c}); }
  void host_sync(int l) { steps_.push_back({StepKind::HOST_SYNC, l, Op::GATE, Comm::DISPATCH}); }
  std::vector<Step> take() { return std::move(steps_); }

 private:
  std::vector<Step> steps_;
};

void route_and_dispatch(StepList& s, int l, bool sync_splits) {
  s.compute(l, {Op::MLP_NORM, Op::GATE});
  if (sync_splits) s.host_sync(l);
  s.compute(l, Op::PERMUTE);
  s.collective(l, Comm::DISPATCH);
}

void routed_and_combine(StepList& s, int l) {
  s.wait(l, Comm::DISPATCH);  // ROUTED_EXPERTS depends on Dispatch
  s.compute(l, Op::ROUTED_EXPERTS);
  s.collective(l, Comm::COMBINE);
}

void finish_moe(StepList& s, int l) {
  s.wait(l, Comm::COMBINE);  // UNPERMUTE depends on Combine
  s.compute(l, {Op::UNPERMUTE, Op::MOE_RESIDUAL});
}

// Layers.cpp alltoall_forward, regular modes (shared_overlap=off).
void alltoall_regular(StepList& s, int layers, bool sync_splits) {
  for (int l = 0; l < layers; ++l) {
    s.compute(l, {Op::ATTN_NORM, Op::ATTN_QKV, Op::ATTN_CORE, Op::ATTN_OUT, Op::ATTN_RESIDUAL});
    route_and_dispatch(s, l, sync_splits);
    routed_and_combine(s, l);
    s.wait(l, Comm::COMBINE);  // shared_overlap=off: Combine waited for before the shared experts
    s.compute(l, {Op::SHARED_EXPERTS, Op::UNPERMUTE, Op::MOE_RESIDUAL});
  }
}

// Layers.cpp alltoall_forward, every layer converted (§4.1 steps 1–8).
void alltoall_farskip(StepList& s, int layers, bool sync_splits) {
  for (int l = 0; l < layers; ++l) {
    s.compute(l, {Op::ATTN_NORM, Op::ATTN_QKV});
    if (l > 0) finish_moe(s, l - 1);  // Combine[l-1] is needed by this layer's MoE input only
    route_and_dispatch(s, l, sync_splits);
    s.compute(l, {Op::ATTN_CORE, Op::ATTN_OUT, Op::ATTN_RESIDUAL});
    routed_and_combine(s, l);
    s.compute(l, Op::SHARED_EXPERTS);
  }
  if (layers > 0) finish_moe(s, layers - 1);  // the last layer's Combine stays exposed
}

void moe_block_allreduce(StepList& s, int l) {
  s.compute(l, {Op::MLP_NORM, Op::GATE, Op::PERMUTE, Op::ROUTED_EXPERTS, Op::UNPERMUTE, Op::SHARED_EXPERTS});
  s.collective(l, Comm::MOE_ALLREDUCE);
}

// Layers.cpp allreduce_forward (§4.2 when farskip).
void allreduce(StepList& s, int layers, bool farskip) {
  for (int l = 0; l < layers; ++l) {
    if (farskip && l > 0) s.wait(l - 1, Comm::ATTN_ALLREDUCE);
    s.compute(l, {Op::ATTN_NORM, Op::ATTN_QKV, Op::ATTN_CORE, Op::ATTN_OUT, Op::ATTN_RESIDUAL});
    s.collective(l, Comm::ATTN_ALLREDUCE);
    if (!farskip) s.wait(l, Comm::ATTN_ALLREDUCE);
    if (farskip && l > 0) s.wait(l - 1, Comm::MOE_ALLREDUCE);
    moe_block_allreduce(s, l);
    if (!farskip) s.wait(l, Comm::MOE_ALLREDUCE);
    s.compute(l, Op::MOE_RESIDUAL);
  }
}

}  // namespace

std::string to_string(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::REGULAR:
      return "regular";
    case ScheduleKind::FARSKIP:
      return "farskip";
    case ScheduleKind::FARSKIP_CE:
      return "farskip-ce";
  }
  return "?";
}

std::vector<ScheduleKind> parse_schedules(const std::string& text, MoeComm comm) {
  std::vector<ScheduleKind> kinds;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    ScheduleKind kind;
    if (item == "regular") {
      kind = ScheduleKind::REGULAR;
    } else if (item == "farskip") {
      kind = ScheduleKind::FARSKIP;
    } else if (item == "farskip-ce") {
      if (comm == MoeComm::ALLREDUCE)
        throw std::invalid_argument("--schedules farskip-ce: copy-engine transport exists for alltoall only");
      kind = ScheduleKind::FARSKIP_CE;
    } else {
      throw std::invalid_argument("--schedules: unknown schedule '" + item +
                                  "' (regular, farskip, farskip-ce)");
    }
    for (ScheduleKind seen : kinds)
      if (seen == kind) throw std::invalid_argument("--schedules: '" + item + "' given twice");
    kinds.push_back(kind);
  }
  if (kinds.empty()) throw std::invalid_argument("--schedules: empty list");
  return kinds;
}

MoeComm parse_moe_comm(const std::string& text) {
  if (text == "alltoall") return MoeComm::ALLTOALL;
  if (text == "allreduce") return MoeComm::ALLREDUCE;
  throw std::invalid_argument("--moe-comm " + text + ": expected alltoall or allreduce");
}

std::string to_string(Op op) {
  static const char* const names[] = {"ATTN_NORM",      "ATTN_QKV",       "ATTN_CORE", "ATTN_OUT",
                                      "RESIDUAL_ADD",   "MLP_NORM",       "GATE",      "PERMUTE",
                                      "ROUTED_EXPERTS", "SHARED_EXPERTS", "UNPERMUTE", "RESIDUAL_ADD"};
  return names[static_cast<int>(op)];
}

std::string to_string(Comm comm) {
  static const char* const names[] = {"dispatch", "combine", "attn_allreduce", "moe_allreduce"};
  return names[static_cast<int>(comm)];
}

std::string to_string(const Step& step) {
  const std::string layer = "L" + std::to_string(step.layer) + ".";
  switch (step.kind) {
    case StepKind::COMPUTE:
      return layer + to_string(step.op);
    case StepKind::COLLECTIVE:
      return layer + to_string(step.comm);
    case StepKind::WAIT:
      return "wait " + layer + to_string(step.comm);
    case StepKind::HOST_SYNC:
      return layer + "host_sync";
  }
  return "?";
}

std::vector<Step> forward_steps(MoeComm comm, ScheduleKind kind, int layers, bool sync_splits) {
  StepList s;
  const bool farskip = kind != ScheduleKind::REGULAR;
  if (comm == MoeComm::ALLREDUCE) {
    allreduce(s, layers, farskip);
  } else if (farskip) {
    alltoall_farskip(s, layers, sync_splits);
  } else {
    alltoall_regular(s, layers, sync_splits);
  }
  return s.take();
}

std::vector<Step> comm_only_steps(MoeComm comm, int layers) {
  StepList s;
  for (const Step& step : forward_steps(comm, ScheduleKind::REGULAR, layers, false)) {
    if (step.kind != StepKind::COLLECTIVE) continue;
    s.collective(step.layer, step.comm);
    s.wait(step.layer, step.comm);
  }
  return s.take();
}

}  // namespace moesim::kernels::layer
