#pragma once
/**
 * @file A minimal JSON value, writer and reader for benchmark results and model files.
 *
 * The GPU benchmarks must build on machines that have only a compiler and the GPU toolkit, so they
 * do not depend on nlohmann_json. Objects keep their insertion order, which keeps output files
 * stable and diffable. Non-finite numbers are written as null (JSON has no NaN or Inf).
 */
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace moesim::kernels {

/** @brief One JSON value: null, bool, integer, number, string, array or ordered object. */
class JsonValue {
 public:
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() = default;
  JsonValue(std::nullptr_t) {}
  JsonValue(bool value) : value_(value) {}
  JsonValue(int value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(long value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(long long value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(unsigned value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(unsigned long value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(unsigned long long value) : value_(static_cast<std::int64_t>(value)) {}
  JsonValue(double value) : value_(value) {}
  JsonValue(const char* value) : value_(std::string(value)) {}
  JsonValue(std::string value) : value_(std::move(value)) {}
  JsonValue(Array value) : value_(std::move(value)) {}
  JsonValue(Object value) : value_(std::move(value)) {}

  /** @brief An empty object, to be filled with set(). */
  static JsonValue object() { return JsonValue(Object{}); }
  /** @brief An empty array, to be filled with push_back(). */
  static JsonValue array() { return JsonValue(Array{}); }

  bool is_object() const { return std::holds_alternative<Object>(value_); }
  bool is_array() const { return std::holds_alternative<Array>(value_); }
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(value_); }
  bool is_bool() const { return std::holds_alternative<bool>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  /** @brief An integer or a floating-point number. */
  bool is_number() const {
    return std::holds_alternative<std::int64_t>(value_) || std::holds_alternative<double>(value_);
  }
  /** @brief An integer, or a double with no fractional part (JSON does not distinguish them). */
  bool is_integer() const;

  /** @brief Typed reads; each throws std::logic_error naming the expected type on a mismatch. */
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;
  /** @brief "null", "bool", "integer", "number", "string", "array" or "object". */
  const char* type_name() const;

  /** @brief Sets `key` in an object (replacing an existing key in place); throws if not an object. */
  JsonValue& set(const std::string& key, JsonValue value);
  /** @brief Appends to an array; throws if not an array. */
  JsonValue& push_back(JsonValue value);
  /** @brief Member lookup in an object; nullptr when absent or not an object. */
  const JsonValue* find(const std::string& key) const;

  /** @brief Serializes; indent < 0 writes one line, otherwise pretty-prints with that many spaces. */
  std::string dump(int indent = -1) const;

 private:
  void write(std::string& out, int indent, int depth) const;

  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> value_ = nullptr;
};

/** @brief Escapes a string for a JSON string literal (quotes included). */
std::string json_quote(const std::string& text);

/** @brief Malformed JSON text; what() is "line L, column C: problem" (both 1-based). */
class JsonParseError : public std::runtime_error {
 public:
  JsonParseError(int line, int column, const std::string& problem);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

/**
 * @brief Parses one JSON document (RFC 8259: objects, arrays, strings with escapes and backslash-u
 * surrogate pairs, numbers, true/false/null); trailing text other than whitespace is an error.
 * Integers that fit in int64 stay integers; other numbers become doubles. A repeated object key
 * is an error (the writer could not represent it faithfully).
 * @throws JsonParseError with the 1-based line and column of the problem.
 */
JsonValue parse_json(const std::string& text);

}  // namespace moesim::kernels
