#pragma once
/**
 * @file A minimal JSON value and writer for benchmark results.
 *
 * The GPU benchmarks must build on machines that have only a compiler and the GPU toolkit, so they
 * do not depend on nlohmann_json. Objects keep their insertion order, which keeps output files
 * stable and diffable. Non-finite numbers are written as null (JSON has no NaN or Inf).
 */
#include <cstdint>
#include <initializer_list>
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

}  // namespace moesim::kernels
