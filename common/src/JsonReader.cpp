#include "moesim/common/JsonReader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moesim {

namespace {

using ParseEvent = nlohmann::json::parse_event_t;

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

/** At most `max` characters of `text`, control characters shown as '?', for quoting input in one line. */
std::string excerpt(const std::string& text, std::size_t max = 40) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? '?' : text[i];
  }
  return text.size() > max ? out + "..." : out;
}

/**
 * Follows nlohmann's parse events to know the JSON pointer being read, so that a repeated key, a container
 * nested too deep or a number out of range is reported where it is. The depth check runs before the
 * container exists, so no value deeper than kMaxJsonDepth is ever built (nlohmann's dump() recurses).
 */
class StrictParse {
 public:
  explicit StrictParse(const std::string& source) : source_(source) {}

  bool on_event(ParseEvent event, nlohmann::json& parsed) {
    switch (event) {
      case ParseEvent::object_start:
      case ParseEvent::array_start:
        if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
          throw ConfigError(source_, excerpt(pointer(), 24),
                            "nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels (the limit for any input, docs/limits.md)");
        }
        frames_.push_back({event == ParseEvent::array_start, 0, {}, {}});
        break;
      case ParseEvent::key: {
        Frame& frame = frames_.back();
        frame.key = parsed.get<std::string>();
        if (!frame.keys.insert(frame.key).second)
          throw ConfigError(source_, pointer(), "appears twice in one object (each key may appear once)");
        break;
      }
      case ParseEvent::object_end:
      case ParseEvent::array_end:
        frames_.pop_back();
        value_done();
        break;
      case ParseEvent::value:
        value_done();
        break;
    }
    return true;
  }

  /** The pointer of the value being read ("" at the top). */
  std::string pointer() const {
    std::string out;
    for (const Frame& frame : frames_)
      out += "/" + (frame.array ? std::to_string(frame.index) : pointer_token(frame.key));
    return out;
  }

 private:
  struct Frame {
    bool array;
    std::size_t index;  // arrays: the element being read
    std::string key;    // objects: the key being read
    std::set<std::string> keys;
  };
  void value_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }

  const std::string& source_;
  std::vector<Frame> frames_;
};

std::string line_of(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min<std::size_t>(byte == 0 ? 0 : byte - 1, text.size());
  return std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

}  // namespace

std::string shown_value(const nlohmann::json& value) {
  if (value.is_object()) return "{...}";
  if (value.is_array()) return "[...]";
  return excerpt(value.dump(), 60);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& source_name) {
  StrictParse strict(source_name);
  try {
    return nlohmann::json::parse(
        text, [&](int, ParseEvent event, nlohmann::json& parsed) { return strict.on_event(event, parsed); });
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: ..."
    std::string what = e.what();
    const std::size_t colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw ConfigError(source_name + ":" + line_of(text, e.byte), "", "invalid JSON: " + excerpt(what, 160));
  } catch (const nlohmann::json::out_of_range& e) {
    // 406 "number overflow parsing '1e400'": the only range error the parser raises.
    std::string what = e.what();
    const std::size_t quote = what.find('\'');
    const std::string token =
        quote == std::string::npos ? "" : what.substr(quote + 1, what.size() - quote - 2);
    throw ConfigError(source_name, strict.pointer(),
                      "= " + excerpt(token) + ": is outside the range of a double (about 1.8e308)");
  }
}

nlohmann::json read_json_file(const std::string& path, InputKind kind) {
  return parse_json_text(read_input_file(path, kind), path);
}

JsonObject::JsonObject(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(value), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!value_.is_object()) {
    throw ConfigError(file_, pointer_.empty() ? "/" : pointer_, "must be a JSON object");
  }
}

void JsonObject::fail(const std::string& key, const std::string& message) const {
  std::string shown;
  if (value_.contains(key)) shown = "= " + shown_value(value_.at(key)) + ": ";
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
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())
    fail(key, "must be < 2^63");
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
