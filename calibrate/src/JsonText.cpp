#include "JsonText.hpp"

#include <limits>

#include "moesim/common/Error.hpp"
#include "moesim/common/InputFile.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/NumberText.hpp"

namespace moesim::calibrate::detail {

std::string read_text_file(const std::string& path) {
  return read_input_file(path, InputKind::DATA);
}

nlohmann::json parse_json_lines(const std::string& text, const std::string& file) {
  return parse_json_text(text, file);
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
  if (v.value().is_number_unsigned() &&
      v.value().get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())
    fail(key, "= " + shown_value(v.value()) + ": must be < 2^63");
  return v.value().get<std::int64_t>();
}

std::int64_t JsonAt::count(const std::string& key, std::int64_t minimum, std::int64_t maximum) const {
  const std::int64_t value = integer(key);
  if (value < minimum || value > maximum) {
    fail(key, "= " + std::to_string(value) + ": must be an integer in [" + std::to_string(minimum) + ", " +
                  std::to_string(maximum) + "]");
  }
  return value;
}

double JsonAt::bounded(const std::string& key, double minimum, double maximum) const {
  const double value = number(key);
  if (!(value >= minimum && value <= maximum)) {
    fail(key, "= " + format_number(value) + ": must be in [" + format_number(minimum) + ", " +
                  format_number(maximum) + "]");
  }
  return value;
}

double JsonAt::p50_seconds(const std::string& key) const {
  // A kernel or collective between a nanosecond and an hour: beyond that a time is not a measurement.
  const double us = at(key).number("p50");
  if (!(us >= 1e-3 && us <= 3.6e9))
    at(key).fail("p50", "= " + format_number(us) + ": must be in [0.001, 3.6e9] us");
  return us * 1e-6;
}

void JsonAt::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(file_, pointer_ + "/" + key, message);
}

}  // namespace moesim::calibrate::detail
