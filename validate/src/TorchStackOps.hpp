#pragma once
/** @file Per-op times of a torch-stack record: measured in the trace beside it, predicted on the simulated
 * rank 0. */
#include <vector>

#include "moesim/schedules/Simulation.hpp"
#include "moesim/validate/TorchStacks.hpp"

namespace moesim::validate::detail {

/** @brief Each (op, pass) of the record's first trace and of `result`'s rank 0, forward ops first. */
std::vector<OpTimes> compare_ops(const traces::TorchStackRecord& record,
                                 const schedules::SimulationResult& result);

}  // namespace moesim::validate::detail
