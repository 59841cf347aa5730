#pragma once
// Reading the JSON files calibrate consumes (bench results, Kineto traces): syntax errors name the
// file and the line, and the typed accessors name the file and the JSON pointer of a bad value.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace moesim::calibrate::detail {

/** @brief The whole file as text (read_input_file: a regular file within the limit for measurement files). */
std::string read_text_file(const std::string& path);

/** @brief Parses `text` from `file` strictly (parse_json_text); a syntax error is a ConfigError "file:LINE:
 * ...". */
nlohmann::json parse_json_lines(const std::string& text, const std::string& file);

/** @brief A value inside a file, addressed by its JSON pointer, with checked accessors. */
class JsonAt {
 public:
  JsonAt(const nlohmann::json& value, std::string file, std::string pointer = "")
      : value_(value), file_(std::move(file)), pointer_(std::move(pointer)) {}

  const nlohmann::json& value() const { return value_; }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  bool has(const std::string& key) const { return value_.is_object() && value_.contains(key); }

  JsonAt at(const std::string& key) const;
  JsonAt at(std::size_t index) const;
  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  double number(const std::string& key) const;
  std::optional<double> optional_number(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  /** @brief An integer in [minimum, maximum] (a count or a size that fits the fields it fills). */
  std::int64_t count(const std::string& key, std::int64_t minimum, std::int64_t maximum) const;
  /** @brief A number in [minimum, maximum]. */
  double bounded(const std::string& key, double minimum, double maximum) const;
  /** @brief p50 of a harness time summary {"p50": ...} at `key`, in seconds (the file holds µs). */
  double p50_seconds(const std::string& key) const;
  /** @brief Throws ConfigError "file: /pointer/key message". */
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json& value_;
  std::string file_;
  std::string pointer_;
};

}  // namespace moesim::calibrate::detail
