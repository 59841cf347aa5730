#include <gtest/gtest.h>

#include "moesim/kernels/JsonValue.hpp"

namespace moesim::kernels {
namespace {

TEST(JsonParseTest, ReadsScalars) {
  EXPECT_TRUE(parse_json("null").is_null());
  EXPECT_TRUE(parse_json(" true ").as_bool());
  EXPECT_FALSE(parse_json("false").as_bool());
  EXPECT_EQ(parse_json("-42").as_int(), -42);
  EXPECT_DOUBLE_EQ(parse_json("2.5e-1").as_double(), 0.25);
  EXPECT_EQ(parse_json("\"hi\"").as_string(), "hi");
}

TEST(JsonParseTest, IntegersStayIntegersAndDoublesWithoutFractionAreIntegers) {
  EXPECT_STREQ(parse_json("7").type_name(), "integer");
  EXPECT_STREQ(parse_json("7.0").type_name(), "number");
  EXPECT_TRUE(parse_json("7.0").is_integer());
  EXPECT_EQ(parse_json("7.0").as_int(), 7);
  EXPECT_FALSE(parse_json("7.5").is_integer());
  EXPECT_THROW((void)parse_json("7.5").as_int(), std::logic_error);
  // Beyond int64: kept as a double.
  EXPECT_STREQ(parse_json("123456789012345678901234").type_name(), "number");
}

TEST(JsonParseTest, ReadsNestedContainersInOrder) {
  const JsonValue v = parse_json(R"({"b": [1, {"c": null}], "a": {"x": "y"}})");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.as_object()[0].first, "b");
  EXPECT_EQ(v.find("b")->as_array().size(), 2u);
  EXPECT_TRUE(v.find("b")->as_array()[1].find("c")->is_null());
  EXPECT_EQ(v.find("a")->find("x")->as_string(), "y");
  EXPECT_EQ(parse_json("[]").as_array().size(), 0u);
  EXPECT_EQ(parse_json("{}").as_object().size(), 0u);
}

TEST(JsonParseTest, DecodesEscapesAndSurrogatePairs) {
  EXPECT_EQ(parse_json(R"("a\"b\\c\/\n\t")").as_string(), "a\"b\\c/\n\t");
  EXPECT_EQ(parse_json(R"("\u00e9")").as_string(), "\xC3\xA9");
  EXPECT_EQ(parse_json(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");
}

TEST(JsonParseTest, RoundTripsTheWriter) {
  JsonValue v = JsonValue::object();
  v.set("name", "q\"uote");
  v.set("values", JsonValue(JsonValue::Array{1, 2.5, true, nullptr}));
  EXPECT_EQ(parse_json(v.dump(2)).dump(), v.dump());
}

void expect_error_at(const std::string& text, int line, int column, const std::string& fragment) {
  try {
    (void)parse_json(text);
    FAIL() << "no error for " << text;
  } catch (const JsonParseError& error) {
    EXPECT_EQ(error.line(), line) << error.what();
    EXPECT_EQ(error.column(), column) << error.what();
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(JsonParseTest, ErrorsCarryLineAndColumn) {
  expect_error_at("{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':'");
  expect_error_at("[1, 2,]", 1, 7, "expected a value");
  expect_error_at("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key");
  expect_error_at("\"abc", 1, 5, "unterminated string");
  expect_error_at("01", 1, 2, "leading zero");
  expect_error_at("[1] x", 1, 5, "unexpected text");
  expect_error_at("tru", 1, 1, "invalid literal");
  expect_error_at("\"\\x\"", 1, 3, "invalid escape");
  expect_error_at("", 1, 1, "unexpected end of input");
}

}  // namespace
}  // namespace moesim::kernels
