#include "moesim/sim/Power.hpp"

#include <algorithm>
#include <cmath>

#include "moesim/common/Error.hpp"

namespace moesim::sim {
namespace {

struct WireBytes {
  double sent = 0, received = 0;
};

/** Bytes member `index` of the collective puts on and takes off the fabric (ring algorithms for the rest). */
WireBytes member_bytes(const CollectiveSpec& spec, std::size_t index) {
  WireBytes bytes;
  const auto n = static_cast<double>(spec.group.size());
  if (n < 2) return bytes;
  switch (spec.kind) {
    case CollectiveKind::ALL_TO_ALL:
      for (std::size_t j = 0; j < spec.pairs().size(); ++j) {
        if (j == index) continue;
        bytes.sent += spec.pairs()[index][j];
        bytes.received += spec.pairs()[j][index];
      }
      return bytes;
    case CollectiveKind::ALL_REDUCE:
      bytes.sent = bytes.received = 2 * (n - 1) / n * spec.bytes;
      return bytes;
    case CollectiveKind::ALL_GATHER:
    case CollectiveKind::REDUCE_SCATTER:
      bytes.sent = bytes.received = (n - 1) / n * spec.bytes;
      return bytes;
  }
  return bytes;
}

}  // namespace

std::vector<RankEnergy> rank_energy(const Program& program, const PowerModel& model) {
  std::vector<RankEnergy> energy(static_cast<std::size_t>(program.world_size()));
  for (const Op& op : program.ops()) {
    RankEnergy& rank = energy[static_cast<std::size_t>(op.rank)];
    if (op.kind == OpKind::KERNEL) {
      rank.compute_j_at_full_speed += model.compute_w_at_peak * op.work.peak_ns * 1e-9;
      rank.hbm_j += model.hbm_j_per_byte * op.work.hbm_bytes;
    } else if (op.kind == OpKind::COLLECTIVE) {
      const CollectiveSpec& spec = program.collectives()[static_cast<std::size_t>(op.collective)];
      const auto member = std::find(spec.group.begin(), spec.group.end(), op.rank) - spec.group.begin();
      const WireBytes bytes = member_bytes(spec, static_cast<std::size_t>(member));
      rank.bytes_sent += bytes.sent;
      rank.bytes_received += bytes.received;
    } else if (op.kind == OpKind::TRANSFER && op.dst_rank != op.rank) {
      rank.bytes_sent += op.bytes;
      if (program.is_simulated(op.dst_rank))
        energy[static_cast<std::size_t>(op.dst_rank)].bytes_received += op.bytes;
    }
  }
  for (RankEnergy& rank : energy) {
    const double wire = rank.bytes_sent + rank.bytes_received;
    rank.hbm_j += model.hbm_j_per_byte * wire;
    rank.link_j = model.link_j_per_byte * wire;
  }
  return energy;
}

double mean_power_w(const RankEnergy& energy, const PowerModel& model, double speed, double period_ns) {
  if (period_ns <= 0) return model.idle_w;
  const double compute = energy.compute_j_at_full_speed * std::pow(speed, model.speed_exponent - 1);
  return model.idle_w + (compute + energy.hbm_j + energy.link_j) / (period_ns * 1e-9);
}

namespace {

/**
 * The speed at which a rank's mean power over `period_ns` is the limit, holding the period fixed. The
 * period itself grows as the speed falls, so the caller iterates.
 */
double speed_at_limit(const RankEnergy& energy, const PowerModel& model, double period_ns) {
  if (energy.compute_j_at_full_speed <= 0) return 1.0;
  const double budget = (model.limit_w - model.idle_w) * period_ns * 1e-9 - energy.hbm_j - energy.link_j;
  if (budget <= 0) return kMinSpeed;
  const double speed = std::pow(budget / energy.compute_j_at_full_speed, 1.0 / (model.speed_exponent - 1));
  return std::clamp(speed, kMinSpeed, 1.0);
}

}  // namespace

RunResult run_power_capped(const Platform& platform, const Program& program, const JitterSpec& jitter,
                           const PowerModel& model, PowerOutcome& outcome) {
  if (!(model.limit_w > model.idle_w) || !(model.speed_exponent > 1))
    throw ScheduleError("power model: the limit must exceed idle power and the speed exponent must exceed 1");
  constexpr int kMaxRuns = 12;
  constexpr double kTolerance = 2e-4;  // of speed: well below the 0.03 speedup tolerance of validation
  const auto world = static_cast<std::size_t>(program.world_size());
  const std::vector<RankEnergy> energy = rank_energy(program, model);
  Platform capped = platform;
  capped.compute_speed.assign(world, 1.0);
  outcome = PowerOutcome{};
  RunResult result;
  // For compute-bound work the period scales as 1/speed, so the fixed point of speed_at_limit is reached
  // in one step by moving a share (γ−1)/γ of the way in log space; other work only slows convergence.
  const double step = (model.speed_exponent - 1) / model.speed_exponent;
  for (int run = 0; run < kMaxRuns; ++run) {
    result = sim::run(capped, program, jitter);
    ++outcome.runs;
    const auto period = static_cast<double>(result.makespan_ns);
    if (run == 0) {
      for (std::size_t r = 0; r < world; ++r)
        outcome.uncapped_power_w.push_back(mean_power_w(energy[r], model, 1.0, period));
    }
    double moved = 0;
    std::vector<double> next(world, 1.0);
    for (int r : program.simulated_ranks()) {
      const auto i = static_cast<std::size_t>(r);
      const double now = capped.compute_speed[i];
      const double target = speed_at_limit(energy[i], model, period);  // 1 when full speed fits
      next[i] = std::exp(std::log(now) + step * (std::log(target) - std::log(now)));
      moved = std::max(moved, std::abs(next[i] - now));
    }
    for (std::size_t r = 0; r < world; ++r)
      next[r] = next[static_cast<std::size_t>(program.representative(static_cast<int>(r)))];
    if (moved < kTolerance) {
      outcome.converged = true;
      break;
    }
    capped.compute_speed = next;
  }
  outcome.speed = capped.compute_speed;
  const auto period = static_cast<double>(result.makespan_ns);
  for (std::size_t r = 0; r < world; ++r)
    outcome.mean_power_w.push_back(
        mean_power_w(energy[static_cast<std::size_t>(program.representative(static_cast<int>(r)))], model,
                     outcome.speed[r], period));
  return result;
}

}  // namespace moesim::sim
