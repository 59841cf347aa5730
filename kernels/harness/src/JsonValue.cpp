#include "moesim/kernels/JsonValue.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace moesim::kernels {
namespace {

void newline(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

std::string format_double(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  // %.17g round-trips every double; shorter forms are tried first for readability.
  for (int precision : {6, 10, 15, 17}) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

bool JsonValue::is_integer() const {
  if (std::holds_alternative<std::int64_t>(value_)) return true;
  const auto* number = std::get_if<double>(&value_);
  return number != nullptr && std::isfinite(*number) && std::floor(*number) == *number &&
         std::fabs(*number) < 9.007199254740992e15;
}

const char* JsonValue::type_name() const {
  switch (value_.index()) {
    case 0:
      return "null";
    case 1:
      return "bool";
    case 2:
      return "integer";
    case 3:
      return "number";
    case 4:
      return "string";
    case 5:
      return "array";
    default:
      return "object";
  }
}

namespace {
[[noreturn]] void wrong_type(const JsonValue& value, const char* expected) {
  throw std::logic_error(std::string("JSON value is ") + value.type_name() + ", expected " + expected);
}
}  // namespace

bool JsonValue::as_bool() const {
  if (const auto* flag = std::get_if<bool>(&value_)) return *flag;
  wrong_type(*this, "bool");
}

std::int64_t JsonValue::as_int() const {
  if (const auto* integer = std::get_if<std::int64_t>(&value_)) return *integer;
  if (is_integer()) return static_cast<std::int64_t>(std::get<double>(value_));
  wrong_type(*this, "integer");
}

double JsonValue::as_double() const {
  if (const auto* integer = std::get_if<std::int64_t>(&value_)) return static_cast<double>(*integer);
  if (const auto* number = std::get_if<double>(&value_)) return *number;
  wrong_type(*this, "number");
}

const std::string& JsonValue::as_string() const {
  if (const auto* text = std::get_if<std::string>(&value_)) return *text;
  wrong_type(*this, "string");
}

const JsonValue::Array& JsonValue::as_array() const {
  if (const auto* elements = std::get_if<Array>(&value_)) return *elements;
  wrong_type(*this, "array");
}

const JsonValue::Object& JsonValue::as_object() const {
  if (const auto* members = std::get_if<Object>(&value_)) return *members;
  wrong_type(*this, "object");
}

JsonValue& JsonValue::set(const std::string& key, JsonValue value) {
  auto* members = std::get_if<Object>(&value_);
  if (members == nullptr) throw std::logic_error("JsonValue::set on a value that is not an object");
  for (auto& [existing_key, existing_value] : *members) {
    if (existing_key == key) {
      existing_value = std::move(value);
      return existing_value;
    }
  }
  members->emplace_back(key, std::move(value));
  return members->back().second;
}

JsonValue& JsonValue::push_back(JsonValue value) {
  auto* elements = std::get_if<Array>(&value_);
  if (elements == nullptr) throw std::logic_error("JsonValue::push_back on a value that is not an array");
  elements->push_back(std::move(value));
  return elements->back();
}

const JsonValue* JsonValue::find(const std::string& key) const {
  const auto* members = std::get_if<Object>(&value_);
  if (members == nullptr) return nullptr;
  for (const auto& [existing_key, existing_value] : *members) {
    if (existing_key == key) return &existing_value;
  }
  return nullptr;
}

std::string JsonValue::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void JsonValue::write(std::string& out, int indent, int depth) const {
  if (std::holds_alternative<std::nullptr_t>(value_)) {
    out += "null";
  } else if (const auto* flag = std::get_if<bool>(&value_)) {
    out += *flag ? "true" : "false";
  } else if (const auto* integer = std::get_if<std::int64_t>(&value_)) {
    out += std::to_string(*integer);
  } else if (const auto* number = std::get_if<double>(&value_)) {
    out += format_double(*number);
  } else if (const auto* text = std::get_if<std::string>(&value_)) {
    out += json_quote(*text);
  } else if (const auto* elements = std::get_if<Array>(&value_)) {
    out += '[';
    for (std::size_t i = 0; i < elements->size(); ++i) {
      if (i > 0) out += ',';
      newline(out, indent, depth + 1);
      (*elements)[i].write(out, indent, depth + 1);
    }
    if (!elements->empty()) newline(out, indent, depth);
    out += ']';
  } else {
    const auto& members = std::get<Object>(value_);
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out += ',';
      newline(out, indent, depth + 1);
      out += json_quote(members[i].first);
      out += indent < 0 ? ":" : ": ";
      members[i].second.write(out, indent, depth + 1);
    }
    if (!members.empty()) newline(out, indent, depth);
    out += '}';
  }
}

}  // namespace moesim::kernels
