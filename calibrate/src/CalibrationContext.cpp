#include "CalibrationContext.hpp"

#include <cmath>
#include <cstdio>

#include "SourceText.hpp"

namespace moesim::calibrate::detail {

std::string SourceTags::tag(const std::string& file, const std::string& what) {
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (files_[i] == file) return "[C" + std::to_string(i + 1) + "]";
  }
  files_.push_back(file);
  lines_.push_back("[C" + std::to_string(files_.size()) + "] " + file + ": " + what);
  return "[C" + std::to_string(files_.size()) + "]";
}

std::string SourceTags::tags_of(const std::set<std::string>& files) const {
  std::string out;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (files.count(files_[i])) out += "[C" + std::to_string(i + 1) + "]";
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3 && std::fmod(bytes, 1024) == 0) {
    bytes /= 1024;
    ++u;
  }
  return num(bytes, 6) + " " + units[u];
}

double round4(double value) {
  return round_significant(value, kDigits);
}

std::optional<hw::CollectiveKind> profile_kind(const std::string& op) {
  return hw::try_parse_collective_kind(op);
}

std::string files_tags(Context& c, const std::string& benchmark) {
  std::set<std::string> files;
  for (const RunInfo& r : c.in.bench.runs) {
    if (r.benchmark == benchmark) files.insert(r.file);
  }
  return c.tags.tags_of(files);
}

void add_residual(Context& c, const std::string& table, const ErrorSummary& e, const std::string& note) {
  c.out.residuals.push_back({table, e.points, e.max_abs, e.mean_abs, note});
}

}  // namespace moesim::calibrate::detail
