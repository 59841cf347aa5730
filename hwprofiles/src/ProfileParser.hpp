#pragma once
/** @file JSON document → HwProfile in SI units (private). Checks types and keys only; rules live in
 * validate(). */
#include <nlohmann/json.hpp>
#include <string>

#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::hw::detail {

/** @brief Reads every key of FORMAT.md, converts units, rejects unknown keys; does not validate ranges. */
HwProfile parse_profile(const nlohmann::json& document, const std::string& source_file);

}  // namespace moesim::hw::detail
