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
#include "moesim/common/InputFile.hpp"

namespace moesim {

/** @brief The deepest nesting of arrays and objects an input may have (docs/limits.md). */
inline constexpr int kMaxJsonDepth = 64;

/**
 * @brief Parses text that came from `source_name` (a file name, a test label), strictly: a syntax
 * error ("file:LINE: invalid JSON: ..."), a number outside the range of a double, a key that appears
 * twice in one object, or nesting deeper than kMaxJsonDepth is a ConfigError naming the file and, where
 * there is one, the JSON pointer. The value returned can be printed and destroyed without deep recursion.
 */
nlohmann::json parse_json_text(const std::string& text, const std::string& source_name);

/** @brief Reads (read_input_file: a regular file within the limit of `kind`) and parses a whole file. */
nlohmann::json read_json_file(const std::string& path, InputKind kind = InputKind::SPEC);

/** @brief A value as error messages show it: a scalar as written (at most 60 characters), {...} or [...]. */
std::string shown_value(const nlohmann::json& value);

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
  /** @brief An integer in the range of std::int64_t (larger ones are errors, never wrapped). */
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
