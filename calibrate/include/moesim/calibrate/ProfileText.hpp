#pragma once
/**
 * @file The text of a profile file as `moesim calibrate` writes it: hw::profile_to_json()'s keys
 * and values, laid out for review. Objects open one key per line (2-space indent); arrays of
 * numbers stay on one line; arrays of arrays or objects put one element per line, an element
 * object on one line. Ends with a newline.
 */
#include <string>

#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::calibrate {

/** @brief The JSON text of `profile` (deterministic: same profile, same bytes). */
std::string profile_text(const hw::HwProfile& profile);

}  // namespace moesim::calibrate
