// The FoldMoE family (FoldMoE paper, shared/seeds/004): Megatron-MoE, Tutel and FoldMoE's attention-MoE
// token pipelines, one op DAG builder (FoldPipeline) in five styles.
#include "FoldPipeline.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/schedules/FoldMoe.hpp"

namespace moesim::schedules {

namespace detail {
namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw ScheduleError(message);
}
}  // namespace

/**
 * The FoldMoE paper's layout: TP+SP attention inside a node (tp GPUs), ep/tp such TP groups forming the
 * EP group of the MoE layers, all-to-all Dispatch/Combine; micro-batches split each rank's share of
 * every sequence evenly.
 */
void validate_foldmoe(const Scenario& s, bool pipelined) {
  const auto& p = s.parallel;
  const auto& w = s.workload;
  const std::string tp = std::to_string(p.tp);
  require(w.phase == Phase::FORWARD || w.phase == Phase::TRAIN,
          "--schedule " + s.schedule + " models training: use --phase forward or train");
  require(p.moe_comm == MoeComm::ALLTOALL,
          "--schedule " + s.schedule + " models all-to-all Dispatch/Combine: use --moe-comm alltoall");
  require(p.ep % p.tp == 0,
          "--tp " + tp + " must divide --ep " + std::to_string(p.ep) + " (the EP group is ep/tp TP groups)");
  require(s.hw.node.gpus_per_node % p.tp == 0, "--tp " + tp + " must divide the " +
                                                   std::to_string(s.hw.node.gpus_per_node) +
                                                   " GPUs of a node (TP+SP runs inside a node)");
  require(w.seq_len % p.tp == 0, "--seq " + std::to_string(w.seq_len) + " must be a multiple of --tp " + tp +
                                     " (sequence parallelism)");
  if (!pipelined) {
    if (auto it = s.options.find("layout");
        it != s.options.end() && it->second != "ep" && it->second != "core-r0.9")
      throw ConfigError("", "--opt", "layout=" + it->second + ": expected ep or core-r0.9");
    require(!is_core_r09_layout(s) || s.model.moe.experts % (p.ep / p.tp) == 0,
            "--opt layout=core-r0.9: the ep/tp = " + std::to_string(p.ep / p.tp) +
                " TP groups must divide the " + std::to_string(s.model.moe.experts) + " experts");
    return;  // megatron runs d = 1 whatever --degree says
  }
  if (s.degree == 0) {
    require(!candidate_degrees(s).empty(), "--degree auto found no d in [2, 16] with --seq " +
                                               std::to_string(w.seq_len) +
                                               " divisible by tp*d; give --degree N");
    return;
  }
  require(w.seq_len % (std::int64_t{p.tp} * s.degree) == 0,
          "--degree " + std::to_string(s.degree) + ": --seq " + std::to_string(w.seq_len) +
              " must be a multiple of tp*d = " + std::to_string(p.tp * s.degree) +
              " so that every MoE micro-batch splits evenly over the TP group");
}
}  // namespace detail

std::vector<int> candidate_degrees(const Scenario& s) {
  std::vector<int> degrees;
  const std::int64_t tp = std::max(1, s.parallel.tp);
  for (int d = 2; d <= 16; ++d) {
    if (s.workload.seq_len > 0 && s.workload.seq_len % (tp * d) == 0) degrees.push_back(d);
  }
  return degrees;
}

namespace detail {
bool is_core_r09_layout(const Scenario& s) {
  auto it = s.options.find("layout");
  return it != s.options.end() && it->second == "core-r0.9";
}
}  // namespace detail

namespace families {

void foldmoe(ScheduleRegistry& registry) {
  using detail::FoldStyle;
  auto add = [&registry](const char* name, const char* help, FoldStyle style) {
    const bool pipelined = style != FoldStyle::WHOLE;
    Schedule schedule;
    schedule.name = name;
    schedule.help = help;
    if (!pipelined) {
      schedule.options = {
          {"layout", "ep|core-r0.9",
           "MoE layout: ep (default; EP over every rank, experts whole) or core-r0.9 (Megatron-Core "
           "r0.9 with TP: EP only across the TP groups, experts split over each TP group, TP "
           "all-gather/reduce-scatter around them)"}};
    }
    schedule.validate = [pipelined](const Scenario& s) { detail::validate_foldmoe(s, pipelined); };
    schedule.build = [style](const Scenario& s) { return detail::build_foldmoe(s, style); };
    schedule.takes_degree = true;
    schedule.degrees =
        pipelined ? std::function<std::vector<int>(const Scenario&)>(candidate_degrees) : nullptr;
    registry.add(std::move(schedule));
  };
  add("megatron",
      "FoldMoE family baseline (Megatron-MoE): TP+SP attention, then Dispatch, experts and Combine of the "
      "whole batch, nothing overlapped (d = 1)",
      FoldStyle::WHOLE);
  add("tutel",
      "FoldMoE family: Tutel's MoE-only token pipeline; Dispatch, experts and Combine of d chunks overlap "
      "(--degree N|auto)",
      FoldStyle::MOE_ONLY);
  add("aaam",
      "FoldMoE family (FoldMoE §3): attention-MoE pipeline over d token micro-batches, all attention slices "
      "first, then all MoE micro-batches (--degree N|auto)",
      FoldStyle::ALL_THEN_ALL);
  add("1a1m",
      "FoldMoE family (FoldMoE §4.1): attention-MoE pipeline interleaving one attention slice and one MoE "
      "micro-batch (--degree N|auto)",
      FoldStyle::ONE_BY_ONE);
  add("1a1m-uniform",
      "FoldMoE (FoldMoE §4.2): 1a1m with Algorithm 1's quick-start time-uniform attention slices and a "
      "token buffer in front of d uniform MoE micro-batches (--degree N|auto)",
      FoldStyle::ONE_BY_ONE_UNIFORM);
}

}  // namespace families
}  // namespace moesim::schedules
