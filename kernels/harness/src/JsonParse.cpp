// A recursive-descent JSON reader for the model files the layer runner shares with the simulator.
// The harness cannot use nlohmann_json (GPU nodes build kernels/ with only a compiler and the GPU
// toolkit), so it reads JSON itself; every error says where, as line and column.
#include <cerrno>
#include <cstdlib>

#include "moesim/kernels/JsonValue.hpp"

namespace moesim::kernels {

JsonParseError::JsonParseError(int line, int column, const std::string& problem)
    : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                         problem),
      line_(line),
      column_(column) {}

namespace {

constexpr int kMaxDepth = 256;  // deeper nesting is certainly not a model file; avoids stack overflow

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  JsonValue document() {
    skip_space();
    JsonValue value = parse_value(0);
    skip_space();
    if (pos_ < text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { fail_at(pos_, problem); }

  [[noreturn]] void fail_at(std::size_t at, const std::string& problem) const {
    int line = 1, column = 1;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw JsonParseError(line, column, problem);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  void expect(char c, const char* what) {
    if (peek() != c) fail(std::string("expected ") + what);
    ++pos_;
  }

  JsonValue parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    switch (peek()) {
      case '{':
        return parse_object(depth);
      case '[':
        return parse_array(depth);
      case '"':
        return JsonValue(parse_string());
      case 't':
        return parse_word("true", JsonValue(true));
      case 'f':
        return parse_word("false", JsonValue(false));
      case 'n':
        return parse_word("null", JsonValue());
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        if (at_end()) fail("unexpected end of input, expected a value");
        fail(std::string("unexpected character '") + peek() + "', expected a value");
    }
  }

  JsonValue parse_word(const std::string& word, JsonValue value) {
    if (text_.compare(pos_, word.size(), word) != 0) fail("invalid literal, expected " + word);
    pos_ += word.size();
    return value;
  }

  JsonValue parse_object(int depth) {
    ++pos_;  // '{'
    JsonValue object = JsonValue::object();
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      skip_space();
      const std::size_t key_at = pos_;
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string();
      if (object.find(key) != nullptr) fail_at(key_at, "duplicate key \"" + key + "\"");
      skip_space();
      expect(':', "':' after an object key");
      skip_space();
      object.set(key, parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}', "',' or '}' in an object");
      return object;
    }
  }

  JsonValue parse_array(int depth) {
    ++pos_;  // '['
    JsonValue array = JsonValue::array();
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      skip_space();
      array.push_back(parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']', "',' or ']' in an array");
      return array;
    }
  }

  unsigned parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("invalid hex digit in a \\u escape");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  unsigned parse_unicode_escape() {
    const unsigned code = parse_hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) fail("unpaired low surrogate in a \\u escape");
    if (code < 0xD800 || code > 0xDBFF) return code;
    if (text_.compare(pos_, 2, "\\u") != 0) fail("high surrogate not followed by a \\u low surrogate");
    pos_ += 2;
    const unsigned low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate not followed by a low surrogate");
    return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail_at(pos_ - 1, "control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          append_utf8(out, parse_unicode_escape());
          break;
        default:
          fail_at(pos_ - 1, std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  void digits(const char* what) {
    if (!(peek() >= '0' && peek() <= '9')) fail(std::string("expected a digit ") + what);
    while (peek() >= '0' && peek() <= '9') ++pos_;
  }

  JsonValue parse_number() {
    const std::size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9') fail("leading zero in a number");
    } else {
      digits("in a number");
    }
    if (peek() == '.') {
      ++pos_;
      integral = false;
      digits("after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      integral = false;
      if (peek() == '+' || peek() == '-') ++pos_;
      digits("in the exponent");
    }
    const std::string literal = text_.substr(start, pos_ - start);
    errno = 0;
    if (integral) {
      const long long value = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == 0) return JsonValue(value);
      errno = 0;  // out of int64 range: keep it as a double
    }
    const double value = std::strtod(literal.c_str(), nullptr);
    if (errno == ERANGE && (value > 1.0 || value < -1.0)) fail_at(start, "number out of range");
    return JsonValue(value);
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

JsonValue parse_json(const std::string& text) {
  return Parser(text).document();
}

}  // namespace moesim::kernels
