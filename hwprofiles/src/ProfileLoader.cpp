#include "moesim/hwprofiles/ProfileLoader.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "ProfileParser.hpp"
#include "moesim/common/DataRoot.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::hw {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kJsonSuffix = ".json";
constexpr std::string_view kCalibratedSuffix = ".calibrated.json";

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool looks_like_path(const std::string& name_or_path) {
  std::error_code ignored;
  // Anything that exists but a folder is read as a file, so that a FIFO or a device gets its own error.
  return ends_with(name_or_path, kJsonSuffix) ||
         (fs::exists(name_or_path, ignored) && !fs::is_directory(name_or_path, ignored));
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

fs::path default_data_dir() {
  return data_root();
}

fs::path profiles_dir(const fs::path& data_dir) {
  return data_dir / "hwprofiles" / "profiles";
}

HwProfile profile_from_json(const nlohmann::json& document, const std::string& source_file) {
  HwProfile profile = detail::parse_profile(document, source_file);
  validate(profile);
  return profile;
}

HwProfile load_profile_file(const fs::path& path) {
  const std::string file = path.string();
  return profile_from_json(read_json_file(file), file);
}

fs::path resolve_profile_path(const std::string& name_or_path, const fs::path& data_dir) {
  if (looks_like_path(name_or_path)) return fs::path(name_or_path);
  const fs::path dir = profiles_dir(data_dir);
  std::error_code ignored;
  for (std::string_view suffix : {kCalibratedSuffix, kJsonSuffix}) {
    fs::path candidate = dir / (name_or_path + std::string(suffix));
    if (fs::is_regular_file(candidate, ignored)) return candidate;
  }
  throw ConfigError(dir.string(), "",
                    "has no hardware profile named '" + name_or_path +
                        "' (shipped: " + join(shipped_profile_names(data_dir)) + ")");
}

HwProfile load_profile(const std::string& name_or_path, const fs::path& data_dir) {
  return load_profile_file(resolve_profile_path(name_or_path, data_dir));
}

HwProfile load_profile(const std::string& name_or_path) {
  return load_profile(name_or_path, default_data_dir());
}

std::vector<std::string> shipped_profile_names(const fs::path& data_dir) {
  std::set<std::string> names;  // ordered and de-duplicated: "x.json" and "x.calibrated.json" are one name
  std::error_code error;
  for (fs::directory_iterator it(profiles_dir(data_dir), error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file()) continue;
    std::string file = it->path().filename().string();
    if (ends_with(file, kCalibratedSuffix)) {
      names.insert(file.substr(0, file.size() - kCalibratedSuffix.size()));
    } else if (ends_with(file, kJsonSuffix)) {
      names.insert(file.substr(0, file.size() - kJsonSuffix.size()));
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> shipped_profile_names() {
  return shipped_profile_names(default_data_dir());
}

}  // namespace moesim::hw
