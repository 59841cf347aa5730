#include "moesim/validate/OpProfile.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "moesim/common/Error.hpp"

namespace moesim::validate {

namespace {

using sim::OpId;
using sim::OpKind;
using sim::TimeNs;

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

/** A step of one layer while it is being built: its name and the ops the host launched for it. */
struct StepInstance {
  std::string name;
  int layer = -1;
  std::vector<OpId> ops;        ///< host-launched ops, in host order (empty for a wait)
  OpId waits_for = sim::NO_OP;  ///< wait steps: the collective member
};

/** The rank's host-launched ops grouped into the runner's steps, with wait steps where a kernel first
 * consumes a collective. */
std::vector<StepInstance> runner_steps(const sim::Program& program, int rank) {
  std::vector<StepInstance> steps;
  for (std::size_t id = 0; id < program.ops().size(); ++id) {
    const sim::Op& op = program.ops()[id];
    if (op.rank != rank || !op.is_host_launched()) continue;
    const std::string name = op_profile_step_name(op);
    const int layer = op.origin.layer;
    const bool continues = !steps.empty() && steps.back().name == name && steps.back().layer == layer &&
                           op.kind == OpKind::KERNEL && steps.back().waits_for == sim::NO_OP;
    if (continues) {
      steps.back().ops.push_back(static_cast<OpId>(id));
      continue;
    }
    if (op.kind == OpKind::KERNEL) {
      std::vector<OpId> collectives;
      for (OpId dep : op.deps) {
        const sim::Op& d = program.op(dep);
        if (d.kind == OpKind::COLLECTIVE && d.rank == rank) collectives.push_back(dep);
      }
      std::sort(collectives.begin(), collectives.end());
      collectives.erase(std::unique(collectives.begin(), collectives.end()), collectives.end());
      for (OpId c : collectives) {
        const sim::OpOrigin& origin = program.op(c).origin;
        steps.push_back({"wait " + origin.block, origin.layer, {}, c});
      }
    }
    steps.push_back({name, layer, {static_cast<OpId>(id)}, sim::NO_OP});
  }
  return steps;
}

double to_ms(TimeNs ns) {
  return static_cast<double>(ns) * 1e-6;
}

}  // namespace

std::string op_profile_step_name(const sim::Op& op) {
  const std::string& block = op.origin.block;
  switch (op.kind) {
    case OpKind::KERNEL:
      return upper(block);
    case OpKind::COLLECTIVE:
      return "launch " + block;
    case OpKind::HOST:
      return block == "split_sizes_to_host" ? "host_sync" : upper(block);
    default:
      return "";
  }
}

std::vector<OpProfileStep> predict_op_profile(const sim::Program& program, const sim::RunResult& run,
                                              int rank) {
  if (!program.is_simulated(rank))
    throw ScheduleError("op profile: rank " + std::to_string(rank) + " is not simulated");
  std::vector<OpProfileStep> out;
  std::map<std::string, std::size_t> index;
  auto timing = [&](OpId id) -> const sim::OpTiming& { return run.ops.at(static_cast<std::size_t>(id)); };
  // compute_done: when the compute stream passes an event recorded now (everything before it has run).
  TimeNs compute_done = 0, host_free = 0;
  for (const StepInstance& s : runner_steps(program, rank)) {
    TimeNs start = std::max(compute_done, host_free), end = start;
    double host_ns = 0;
    if (s.waits_for != sim::NO_OP) {
      end = std::max(start, timing(s.waits_for).end);
    } else {
      const TimeNs host_end = timing(s.ops.back()).launched;
      host_ns = static_cast<double>(host_end - host_free);
      end = std::max(start, host_end);
      for (OpId id : s.ops) {
        const sim::Op& op = program.op(id);
        if (op.kind == OpKind::KERNEL &&
            program.streams(rank).at(static_cast<std::size_t>(op.stream)) == "compute")
          end = std::max(end, timing(id).end);
      }
      host_free = host_end;
    }
    compute_done = end;
    auto [it, added] = index.try_emplace(s.name, out.size());
    if (added) out.push_back({s.name, 0, 0, 0});
    OpProfileStep& row = out[it->second];
    ++row.count;
    row.gpu_ms += to_ms(end - start);
    row.host_ms += host_ns * 1e-6;
  }
  return out;
}

}  // namespace moesim::validate
