#include "moesim/schedules/Scenario.hpp"

#include "moesim/common/Error.hpp"

namespace moesim::schedules {

double host_straggle(const Scenario& s) {
  return s.impl ? cost::straggle_factor(s.impl->rank_spread, s.parallel.ep) : 1.0;
}

std::string implementation_name(const Scenario& s) {
  return s.impl ? s.impl->name : "fused";
}

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::FORWARD:
      return "forward";
    case Phase::TRAIN:
      return "train";
    case Phase::PREFILL:
      return "prefill";
    case Phase::DECODE:
      return "decode";
  }
  return "?";
}

Phase parse_phase(const std::string& text) {
  for (Phase p : {Phase::FORWARD, Phase::TRAIN, Phase::PREFILL, Phase::DECODE}) {
    if (to_string(p) == text) return p;
  }
  throw ConfigError("", "--phase", "= \"" + text + "\": expected forward, train, prefill or decode");
}

std::string to_string(MoeComm comm) {
  return comm == MoeComm::ALLTOALL ? "alltoall" : "allreduce";
}

MoeComm parse_moe_comm(const std::string& text) {
  if (text == "alltoall") return MoeComm::ALLTOALL;
  if (text == "allreduce") return MoeComm::ALLREDUCE;
  throw ConfigError("", "--moe-comm", "= \"" + text + "\": expected alltoall or allreduce");
}

std::string to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::NONE:
      return "none";
    case Optimizer::ADAM:
      return "adam";
    case Optimizer::ZERO1:
      return "zero1";
  }
  return "?";
}

Optimizer parse_optimizer(const std::string& text) {
  for (Optimizer o : {Optimizer::NONE, Optimizer::ADAM, Optimizer::ZERO1}) {
    if (to_string(o) == text) return o;
  }
  throw ConfigError("", "--optimizer", "= \"" + text + "\": expected none, adam or zero1");
}

bool is_step(const Scenario& s) {
  return s.parallel.pp > 1 || s.parallel.vpp > 1 || s.workload.micro_batches > 1 ||
         s.optimizer != Optimizer::NONE;
}

int total_gpus(const Scenario& s) {
  return s.parallel.ep * s.parallel.pp * s.parallel.dp;
}

int simulated_layers(const Scenario& s) {
  return s.workload.layers > 0 ? s.workload.layers : s.model.layers;
}

int group_size(const Scenario& s) {
  return s.parallel.ep;
}

int node_count(const Scenario& s) {
  if (s.parallel.nodes > 0) return s.parallel.nodes;
  const int per_node = s.hw.node.gpus_per_node;
  return (group_size(s) + per_node - 1) / per_node;
}

namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw ScheduleError(message);
}

}  // namespace

void validate(const Scenario& s) {
  const auto& p = s.parallel;
  const auto& w = s.workload;
  const auto& m = s.model;
  require(p.ep >= 1 && p.tp >= 1 && p.dp >= 1, "--ep, --tp and --dp must be >= 1");
  require(m.moe.experts % p.ep == 0, "--ep " + std::to_string(p.ep) + " does not divide the " +
                                         std::to_string(m.moe.experts) + " experts of " + m.name);
  require(w.tokens > 0, "--tokens (or --mbs x --seq) must be > 0");
  require(w.seq_len > 0 && w.tokens % w.seq_len == 0,
          "--tokens " + std::to_string(w.tokens) + " is not divisible by --seq " + std::to_string(w.seq_len));
  require(w.layers >= 0 && w.layers <= m.layers,
          "--layers " + std::to_string(w.layers) + " exceeds the model's " + std::to_string(m.layers));
  require(m.attention.heads % p.tp == 0, "--tp " + std::to_string(p.tp) + " does not divide the " +
                                             std::to_string(m.attention.heads) + " attention heads");
  const int nodes = node_count(s);
  require(p.ep <= nodes * s.hw.node.gpus_per_node,
          "--ep " + std::to_string(p.ep) + " needs more GPUs than " + std::to_string(nodes) + " node(s) of " +
              std::to_string(s.hw.node.gpus_per_node) + " hold; raise --nodes");
  require(p.pp >= 1 && p.vpp >= 1 && w.micro_batches >= 1, "--pp, --vpp and --micro-batches must be >= 1");
  require(p.pp * p.vpp <= simulated_layers(s), "--pp " + std::to_string(p.pp) + " x --vpp " +
                                                   std::to_string(p.vpp) + " model chunks exceed the " +
                                                   std::to_string(simulated_layers(s)) + " layers simulated");
  require(s.optimizer == Optimizer::NONE || w.phase == Phase::TRAIN,
          "--optimizer " + to_string(s.optimizer) + " needs --phase train");
  require(w.kv_len == 0 || w.phase == Phase::DECODE, "--kv-len applies to --phase decode only");
  require(!w.mtp || w.phase == Phase::DECODE, "--mtp applies to --phase decode only");
  require(!s.fb_overlap || w.phase == Phase::TRAIN,
          "--fb-overlap merges forward and backward chunks: --phase train");
}

}  // namespace moesim::schedules
