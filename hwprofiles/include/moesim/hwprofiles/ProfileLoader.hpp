#pragma once
/**
 * @file Finding, reading and validating hardware profiles.
 *
 * Shipped profiles live in `<data dir>/hwprofiles/profiles/<name>.json`. A calibration run writes
 * `<name>.calibrated.json` next to it, and from then on the name resolves to the calibrated file
 * (SPEC: "`--hw h200` names the best profile shipped for that GPU"). The data dir is the
 * MOESIM_DATA_DIR environment variable when set, else the source tree configured at build time.
 */
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::hw {

/** @brief $MOESIM_DATA_DIR if set and non-empty, else the MOESIM_DATA_DIR given to CMake. */
std::filesystem::path default_data_dir();

/** @brief `<data_dir>/hwprofiles/profiles`. */
std::filesystem::path profiles_dir(const std::filesystem::path& data_dir);

/** @brief Parses and validates a profile document; `source_file` names it in errors and in
 * HwProfile::source_file. */
HwProfile profile_from_json(const nlohmann::json& document, const std::string& source_file);

/** @brief Reads, parses and validates one profile file. Every problem is a ConfigError naming the file. */
HwProfile load_profile_file(const std::filesystem::path& path);

/**
 * @brief Loads a profile by path or by name.
 *
 * `name_or_path` is a path when it names an existing file or ends in ".json". Otherwise it is a
 * profile name resolved in profiles_dir(data_dir): `<name>.calibrated.json` when present, else
 * `<name>.json`. An unknown name throws ConfigError listing shipped_profile_names().
 */
HwProfile load_profile(const std::string& name_or_path, const std::filesystem::path& data_dir);

/** @brief load_profile(name_or_path, default_data_dir()). */
HwProfile load_profile(const std::string& name_or_path);

/** @brief The path load_profile() would read for a name or path (without reading it). */
std::filesystem::path resolve_profile_path(const std::string& name_or_path,
                                           const std::filesystem::path& data_dir);

/** @brief Sorted profile names in profiles_dir(data_dir); "x.json" and "x.calibrated.json" both give "x". */
std::vector<std::string> shipped_profile_names(const std::filesystem::path& data_dir);

/** @brief shipped_profile_names(default_data_dir()). */
std::vector<std::string> shipped_profile_names();

}  // namespace moesim::hw
