#pragma once
/**
 * @file HwProfile → JSON in the layout of FORMAT.md, the inverse of profile_from_json(). The
 * calibration tool uses it to write `<name>.calibrated.json`; values go back to the units their
 * keys name, rounded to 15 significant digits so that 6 µs is written as 6, not 6.000000000000001.
 */
#include <nlohmann/json.hpp>

#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::hw {

/** @brief The profile as a JSON document with keys in FORMAT.md order; HwProfile::source_file is not written.
 */
nlohmann::ordered_json profile_to_json(const HwProfile& profile);

}  // namespace moesim::hw
