#include "moesim/calibrate/ProfileText.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "moesim/hwprofiles/ProfileWriter.hpp"

namespace moesim::calibrate {
namespace {

using nlohmann::ordered_json;

bool is_scalar(const ordered_json& v) {
  return !v.is_object() && !v.is_array();
}

bool all_scalar(const ordered_json& v) {
  return std::all_of(v.begin(), v.end(), [](const ordered_json& e) { return is_scalar(e); });
}

constexpr std::size_t kInlineArrayChars = 110;  // longer scalar arrays (source lists) get one item per line

// A whole number as an integer (1830, not 1830.0); anything else as nlohmann writes it (shortest round trip).
std::string scalar_text(const ordered_json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::fabs(d) < 1e15 && d == std::floor(d))
      return ordered_json(static_cast<long long>(d)).dump();
  }
  return v.dump();
}

// One line: scalars, arrays of scalars, objects of scalars.
std::string inline_text(const ordered_json& v) {
  if (is_scalar(v)) return scalar_text(v);
  std::string out;
  if (v.is_array()) {
    out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + inline_text(v[i]);
    return out + "]";
  }
  out = "{";
  bool first = true;
  for (const auto& [key, value] : v.items()) {
    out += (first ? "" : ", ") + ordered_json(key).dump() + ": " + inline_text(value);
    first = false;
  }
  return out + "}";
}

void write(const ordered_json& v, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  const std::string close(static_cast<std::size_t>(indent), ' ');
  if (is_scalar(v) || v.empty() ||
      (v.is_array() && all_scalar(v) && inline_text(v).size() <= kInlineArrayChars)) {
    out += inline_text(v);
    return;
  }
  if (v.is_array()) {
    out += "[\n";
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += pad;
      if (is_scalar(v[i]) || v[i].is_array() || (v[i].is_object() && all_scalar(v[i]))) {
        out += inline_text(v[i]);
      } else {
        write(v[i], indent + 2, out);
      }
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out += close + "]";
    return;
  }
  out += "{\n";
  std::size_t i = 0;
  for (const auto& [key, value] : v.items()) {
    out += pad + ordered_json(key).dump() + ": ";
    write(value, indent + 2, out);
    out += ++i < v.size() ? ",\n" : "\n";
  }
  out += close + "}";
}

}  // namespace

std::string profile_text(const hw::HwProfile& profile) {
  std::string out;
  write(hw::profile_to_json(profile), 0, out);
  return out + "\n";
}

}  // namespace moesim::calibrate
