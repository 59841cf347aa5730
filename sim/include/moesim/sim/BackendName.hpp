#pragma once
/** @file The name of an engine backend, as `--engine` spells it. */
#include <string>

#include "moesim/sim/Types.hpp"

namespace moesim::sim {

/** @brief "analytic" or "simgrid". */
std::string to_string(Backend backend);
/** @brief The backend `name` names; ConfigError on `flag` otherwise. */
Backend parse_backend(const std::string& name, const std::string& flag);

}  // namespace moesim::sim
