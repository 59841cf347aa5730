#pragma once
/** @file Where each simulated rank of a whole step spends it: idle (the bubble) and communication by kind. */
#include <array>
#include <vector>

#include "moesim/schedules/Simulation.hpp"

namespace moesim::schedules {

/** @brief The kinds of communication a step reports apart. */
enum class StepComm { ALL_TO_ALL, TENSOR, PIPELINE, DATA, OTHER };
inline constexpr int kStepCommKinds = 5;

/** @brief One simulated rank's step: idle time and, per StepComm kind, busy and exposed milliseconds. */
struct RankStepTime {
  int rank = 0;
  double idle_ms = 0;  ///< neither computing nor communicating (host ops aside)
  std::array<double, kStepCommKinds> comm_ms{};
  std::array<double, kStepCommKinds> exposed_ms{};  ///< communication not under the rank's compute
};

/** @brief Every simulated rank of `r`, in simulated_ranks() order. */
std::vector<RankStepTime> step_time_by_rank(const SimulationResult& r);

}  // namespace moesim::schedules
