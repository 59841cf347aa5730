#pragma once
/**
 * @file Strict, path-aware reading of JSON objects into typed structs.
 *
 * Every accessor records the key it consumed; finish() rejects any key left unread, so a typo in
 * an input file is an error instead of a silent default. Errors name the file and the JSON
 * pointer of the offending value.
 */
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "moesim/common/Error.hpp"

namespace moesim {

/** @brief Parses a whole file; a syntax error becomes a ConfigError with the byte offset. */
nlohmann::json read_json_file(const std::string& path);

/** @brief Parses text that came from `source_name` (a file name, "<stdin>", a test label). */
nlohmann::json parse_json_text(const std::string& text, const std::string& source_name);

/** @brief A view of one JSON object at a known pointer inside a known file. */
class JsonObject {
 public:
  JsonObject(const nlohmann::json& value, std::string file, std::string pointer = "");

  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  std::string child_pointer(const std::string& key) const { return pointer_ + "/" + key; }
  bool has(const std::string& key) const { return value_.contains(key); }

  /** @brief Throws ConfigError at `key` with `message` (used for domain rules after reading). */
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  std::string string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  double number(const std::string& key);
  std::optional<double> optional_number(const std::string& key);
  /** @brief A number that must be > 0. */
  double positive(const std::string& key);
  /** @brief A number that must be >= 0. */
  double non_negative(const std::string& key);
  std::int64_t integer(const std::string& key);
  std::optional<std::int64_t> optional_integer(const std::string& key);
  std::int64_t positive_integer(const std::string& key);
  bool boolean(const std::string& key);
  std::optional<bool> optional_boolean(const std::string& key);
  JsonObject object(const std::string& key);
  std::optional<JsonObject> optional_object(const std::string& key);
  /** @brief An array of objects, each as a JsonObject at `key/i`. */
  std::vector<JsonObject> object_array(const std::string& key);
  std::vector<double> number_array(const std::string& key);
  /** @brief The raw value (consumed), for formats the caller walks itself. */
  const nlohmann::json& raw(const std::string& key);

  /** @brief Throws on the first key that no accessor consumed. */
  void finish() const;

 private:
  const nlohmann::json& require(const std::string& key);
  [[noreturn]] void type_error(const std::string& key, const char* expected) const;

  const nlohmann::json& value_;
  std::string file_;
  std::string pointer_;
  std::set<std::string> consumed_;
};

}  // namespace moesim
