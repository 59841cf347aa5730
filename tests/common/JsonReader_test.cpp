#include "moesim/common/JsonReader.hpp"

#include <gtest/gtest.h>

using moesim::ConfigError;
using moesim::JsonObject;
using moesim::parse_json_text;

TEST(JsonReader, ReadsTypedValuesAndAcceptsWhenAllKeysConsumed) {
  auto j = parse_json_text(R"({"a": 2, "b": "x", "c": {"d": true}})", "t.json");
  JsonObject o(j, "t.json");
  EXPECT_EQ(o.positive_integer("a"), 2);
  EXPECT_EQ(o.string("b"), "x");
  auto c = o.object("c");
  EXPECT_TRUE(c.boolean("d"));
  c.finish();
  EXPECT_NO_THROW(o.finish());
}

TEST(JsonReader, UnknownKeyNamesFileAndPointer) {
  auto j = parse_json_text(R"({"a": 1, "typo": 3})", "m.json");
  JsonObject o(j, "m.json");
  o.integer("a");
  try {
    o.finish();
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "m.json: /typo is not a known key");
  }
}

TEST(JsonReader, WrongTypeAndRangeAreErrorsWithValue) {
  auto j = parse_json_text(R"({"bw": 0, "s": 5})", "h.json");
  JsonObject o(j, "h.json");
  try {
    o.positive("bw");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "h.json: /bw = 0: must be > 0");
  }
  EXPECT_THROW(o.string("s"), ConfigError);
  EXPECT_THROW(o.number("missing"), ConfigError);
}

TEST(JsonReader, SyntaxErrorIsConfigError) {
  EXPECT_THROW(parse_json_text("{ nope", "bad.json"), ConfigError);
}

namespace {
std::string parse_error(const std::string& text) {
  try {
    parse_json_text(text, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<parsed>";
}
}  // namespace

TEST(StrictJson, DuplicatedKeysAreErrorsAtTheirPointer) {
  // nlohmann keeps the last of two equal keys: a typo'd override silently won.
  EXPECT_EQ(parse_error(R"({"a": {"b": [1, {"c": 1, "c": 2}]}})"),
            "t.json: /a/b/1/c appears twice in one object (each key may appear once)");
  EXPECT_EQ(parse_error(R"({"a~/b": 1, "a~/b": 2})"),
            "t.json: /a~0~1b appears twice in one object (each key may appear once)");
  EXPECT_EQ(parse_error(R"([{"a": 1}, {"a": 2}])"), "<parsed>");  // one key in each of two objects
}

TEST(StrictJson, NestingPastTheLimitIsRefusedBeforeItIsBuilt) {
  // 100k levels parsed, but dump() and the destructor recursed through them and overflowed the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parse_error(deep).rfind(
                "t.json: /0/0/0/0/0/0/0/0/0/0/0/0... nests arrays and objects deeper than 64", 0),
            0u)
      << parse_error(deep);
  const std::string at_limit = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(parse_error(at_limit), "<parsed>");
  EXPECT_NE(parse_error("[" + at_limit + "]"), "<parsed>");
}

TEST(StrictJson, NumbersPastTheDoubleRangeAndWrappedIntegersAreErrors) {
  // nlohmann throws out_of_range (not parse_error) for 1e400: it escaped as an internal error.
  EXPECT_EQ(parse_error(R"({"x": [1, 1e400]})"),
            "t.json: /x/1 = 1e400: is outside the range of a double (about 1.8e308)");
  auto j = parse_json_text(R"({"big": 9223372036854775808, "max": 9223372036854775807})", "t.json");
  JsonObject o(j, "t.json");
  EXPECT_EQ(o.integer("max"), 9223372036854775807);
  try {
    o.integer("big");  // 2^63 read as int64 was INT64_MIN
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "t.json: /big = 9223372036854775808: must be < 2^63");
  }
}

TEST(StrictJson, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(parse_error("{\n\"a\": 1,\n}")
                .rfind("t.json:3: invalid JSON: syntax error while parsing object key", 0),
            0u)
      << parse_error("{\n\"a\": 1,\n}");
}
