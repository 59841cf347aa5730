#include "moesim/common/JsonReader.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

namespace moesim {

nlohmann::json parse_json_text(const std::string& text, const std::string& source_name) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(source_name, "", "is not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot be opened for reading");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), path);
}

JsonObject::JsonObject(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(value), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!value_.is_object()) {
    throw ConfigError(file_, pointer_.empty() ? "/" : pointer_, "must be a JSON object");
  }
}

void JsonObject::fail(const std::string& key, const std::string& message) const {
  std::string shown;
  if (value_.contains(key)) shown = "= " + value_.at(key).dump() + ": ";
  throw ConfigError(file_, child_pointer(key), shown + message);
}

void JsonObject::type_error(const std::string& key, const char* expected) const {
  fail(key, std::string("expected ") + expected);
}

const nlohmann::json& JsonObject::require(const std::string& key) {
  auto it = value_.find(key);
  if (it == value_.end()) throw ConfigError(file_, child_pointer(key), "is missing (required)");
  consumed_.insert(key);
  return *it;
}

std::string JsonObject::string(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_string()) type_error(key, "a string");
  return v.get<std::string>();
}

std::optional<std::string> JsonObject::optional_string(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return string(key);
}

double JsonObject::number(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_number()) type_error(key, "a number");
  double d = v.get<double>();
  if (!std::isfinite(d)) type_error(key, "a finite number");
  return d;
}

std::optional<double> JsonObject::optional_number(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return number(key);
}

double JsonObject::positive(const std::string& key) {
  double d = number(key);
  if (!(d > 0)) fail(key, "must be > 0");
  return d;
}

double JsonObject::non_negative(const std::string& key) {
  double d = number(key);
  if (d < 0) fail(key, "must be >= 0");
  return d;
}

std::int64_t JsonObject::integer(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_number_integer()) type_error(key, "an integer");
  return v.get<std::int64_t>();
}

std::optional<std::int64_t> JsonObject::optional_integer(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return integer(key);
}

std::int64_t JsonObject::positive_integer(const std::string& key) {
  auto i = integer(key);
  if (i <= 0) fail(key, "must be a positive integer");
  return i;
}

bool JsonObject::boolean(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_boolean()) type_error(key, "true or false");
  return v.get<bool>();
}

std::optional<bool> JsonObject::optional_boolean(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

JsonObject JsonObject::object(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_object()) type_error(key, "an object");
  return JsonObject(v, file_, child_pointer(key));
}

std::optional<JsonObject> JsonObject::optional_object(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return object(key);
}

std::vector<JsonObject> JsonObject::object_array(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_array()) type_error(key, "an array");
  std::vector<JsonObject> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string p = child_pointer(key) + "/" + std::to_string(i);
    if (!v[i].is_object()) throw ConfigError(file_, p, "expected an object");
    out.emplace_back(v[i], file_, p);
  }
  return out;
}

std::vector<double> JsonObject::number_array(const std::string& key) {
  const auto& v = require(key);
  if (!v.is_array()) type_error(key, "an array of numbers");
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) {
      throw ConfigError(file_, child_pointer(key) + "/" + std::to_string(i), "expected a number");
    }
    out.push_back(v[i].get<double>());
  }
  return out;
}

const nlohmann::json& JsonObject::raw(const std::string& key) {
  return require(key);
}

void JsonObject::finish() const {
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (!consumed_.count(it.key())) {
      throw ConfigError(file_, child_pointer(it.key()), "is not a known key");
    }
  }
}

}  // namespace moesim
