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
