#pragma once
/** @file Where shipped data lives: model specs, hardware profiles, published validation tables. */
#include <filesystem>

namespace moesim {

/**
 * @brief The root that holds models/specs, hwprofiles/profiles and validate/published: the MOESIM_DATA_DIR
 * environment variable when set and not empty, else the source tree this build was configured from.
 */
std::filesystem::path data_root();

}  // namespace moesim
