#include "FlagChecks.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "moesim/common/Error.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::app {

CLI::Validator finite_in(double low, double high) {
  const std::string range = "[" + format_number(low) + ", " + format_number(high) + "]";
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size();
        if (whole && std::isfinite(value) && value >= low && value <= high) return {};
        return "expected a finite number in " + range + (whole ? ", got " + format_number(value) : "");
      },
      "FLOAT in " + range);
}

CLI::Validator integer_in(std::uint64_t low, std::uint64_t high) {
  const std::string range = "[" + std::to_string(low) + ", " + std::to_string(high) + "]";
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && stop == text.data() + text.size() && value >= low && value <= high)
          return {};
        return "expected a whole number in " + range;
      },
      "UINT in " + range);
}

std::vector<NamedPath> report_outputs(const std::string& dir) {
  if (dir.empty()) return {};
  std::vector<NamedPath> files;
  for (const char* name : {"index.html", "summary.md", "trace.json"})
    files.push_back({"--report", (std::filesystem::path(dir) / name).string()});
  return files;
}

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  namespace fs = std::filesystem;
  for (const NamedPath& output : outputs) {
    if (output.flag == "--report") {
      // The folder may not exist yet (write_report makes it), but then its parent must.
      const fs::path dir = fs::path(output.path).parent_path();
      std::error_code ec;
      if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw ConfigError("", "--report", "= \"" + dir.string() + "\": is a file, not a folder");
      if (!fs::exists(dir, ec)) {
        const fs::path parent = fs::absolute(dir, ec).parent_path();
        if (!fs::is_directory(parent, ec))
          throw ConfigError("", "--report", "= \"" + dir.string() + "\": its parent folder does not exist");
        continue;
      }
    }
    check_output_path(output.flag, output.path);
  }
  check_distinct_paths(outputs, inputs);
}

}  // namespace moesim::app
