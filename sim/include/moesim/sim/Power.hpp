#pragma once
/**
 * @file Board power of each GPU over a run, and the power-cap governor that lowers a GPU's compute
 * speed until its mean power fits under the limit.
 *
 * A GPU that keeps its tensor cores busy draws more than its board limit at the maximum clock (an H200
 * running bf16 GEMMs back to back: ~1010 W wanted, 700 W allowed; data/calibration/2026-11-22-nvidia-
 * h200-power). The firmware then lowers the clock until the mean power over tens of milliseconds is at
 * the limit. A schedule that hides communication behind compute removes the idle gaps that let the
 * clock recover, so part of its overlap gain is paid back in clock: the engine has to model it, or it
 * credits overlap with time that the power limit takes away.
 *
 * Energy of one rank over a run, at compute speed v (rate of clock-bound work / rate at max clock):
 *   compute  compute_w_at_peak · Σ kernel peak_ns · v^(speed_exponent − 1)
 *            (power ∝ v^speed_exponent for a time ∝ 1/v)
 *   HBM      hbm_j_per_byte · (Σ kernel hbm_bytes + bytes the rank's collectives and transfers send
 *            and receive: each is read from or written to HBM)
 *   fabric   link_j_per_byte · (bytes sent + bytes received)
 * Mean power = idle_w + energy / makespan: in steady state the run repeats back to back, so the
 * makespan is the period over which the firmware averages.
 *
 * Persistent kernels (POOL/TASK) carry no FLOP count, so megakernel runs are not power-capped.
 */
#include <vector>

#include "moesim/sim/Engine.hpp"

namespace moesim::sim {

/** @brief The board's power model; see HwProfile's PowerSpec for where the numbers come from. */
struct PowerModel {
  double limit_w = 0;
  double idle_w = 0;
  double compute_w_at_peak = 0;
  double hbm_j_per_byte = 0;
  double link_j_per_byte = 0;
  double speed_exponent = 2;
};

/** @brief Energy (J) one rank spends in a run, by where it goes; compute at speed 1. */
struct RankEnergy {
  double compute_j_at_full_speed = 0;
  double hbm_j = 0;
  double link_j = 0;
  double bytes_sent = 0, bytes_received = 0;
};

/** @brief Per world rank (zero for ranks a symmetric program does not simulate). */
std::vector<RankEnergy> rank_energy(const Program& program, const PowerModel& model);

/** @brief Mean board power (W) of a rank at compute speed `speed` over `period_ns`. */
double mean_power_w(const RankEnergy& energy, const PowerModel& model, double speed, double period_ns);

/** @brief What the governor settled on, per world rank. */
struct PowerOutcome {
  std::vector<double> speed;         ///< compute speed, (0, 1]
  std::vector<double> mean_power_w;  ///< at that speed over the final run's makespan
  std::vector<double>
      uncapped_power_w;  ///< what the rank would draw at speed 1 over the first run's makespan
  int runs = 0;          ///< engine runs it took
  bool converged = false;
};

/**
 * @brief Runs `program`, then lowers each rank's compute speed until its mean power is at most the limit
 * (rank by rank: a straggler's idle waits let its peers' clocks differ), re-running until the speeds move
 * less than 0.1%. A rank that fits at speed 1 keeps it. Speeds never go below kMinSpeed (a load whose
 * memory and fabric traffic alone exceed the limit is reported, not solved). Returns the last run;
 * `platform.compute_speed` is ignored.
 */
RunResult run_power_capped(const Platform& platform, const Program& program, const JitterSpec& jitter,
                           const PowerModel& model, PowerOutcome& outcome);

constexpr double kMinSpeed = 0.3;

}  // namespace moesim::sim
