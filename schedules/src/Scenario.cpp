#include "moesim/schedules/Scenario.hpp"

#include "moesim/common/Error.hpp"

namespace moesim::schedules {

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
  require(w.phase != Phase::DECODE,
          "--phase decode is not modeled yet (training forward/train and prefill are)");
  if (w.phase == Phase::PREFILL) {
    require(p.moe_comm == MoeComm::ALLREDUCE,
            "--phase prefill is modeled vLLM style: add --moe-comm allreduce");
  }
}

}  // namespace moesim::schedules
