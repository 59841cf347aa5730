#include "JsonText.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "moesim/common/Error.hpp"

namespace moesim::calibrate::detail {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json parse_json_lines(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: ..."
    const std::size_t colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw ConfigError(file + ":" + std::to_string(line), "", "invalid JSON: " + what);
  }
}

JsonAt JsonAt::at(const std::string& key) const {
  if (!value_.is_object()) throw ConfigError(file_, pointer_.empty() ? "/" : pointer_, "must be an object");
  auto it = value_.find(key);
  if (it == value_.end()) fail(key, "is missing");
  return JsonAt(*it, file_, pointer_ + "/" + key);
}

JsonAt JsonAt::at(std::size_t index) const {
  if (!value_.is_array() || index >= value_.size())
    throw ConfigError(file_, pointer_ + "/" + std::to_string(index), "is missing");
  return JsonAt(value_[index], file_, pointer_ + "/" + std::to_string(index));
}

std::string JsonAt::string(const std::string& key) const {
  JsonAt v = at(key);
  if (!v.value().is_string()) fail(key, "must be a string");
  return v.value().get<std::string>();
}

std::optional<std::string> JsonAt::optional_string(const std::string& key) const {
  if (!has(key) || value_.at(key).is_null()) return std::nullopt;
  return string(key);
}

double JsonAt::number(const std::string& key) const {
  JsonAt v = at(key);
  if (!v.value().is_number()) fail(key, "must be a number");
  return v.value().get<double>();
}

std::optional<double> JsonAt::optional_number(const std::string& key) const {
  if (!has(key) || value_.at(key).is_null()) return std::nullopt;
  return number(key);
}

std::int64_t JsonAt::integer(const std::string& key) const {
  JsonAt v = at(key);
  if (!v.value().is_number_integer()) fail(key, "must be an integer");
  return v.value().get<std::int64_t>();
}

double JsonAt::p50_seconds(const std::string& key) const {
  const double us = at(key).number("p50");
  if (!(us > 0)) at(key).fail("p50", "= " + std::to_string(us) + ": must be > 0");
  return us * 1e-6;
}

void JsonAt::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(file_, pointer_ + "/" + key, message);
}

}  // namespace moesim::calibrate::detail
