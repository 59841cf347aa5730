#include "moesim/kernels/JsonValue.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#ifdef MOESIM_TEST_HAVE_NLOHMANN_JSON
#include <nlohmann/json.hpp>
#endif

namespace moesim::kernels {
namespace {

TEST(JsonValueTest, WritesScalarsCompactly) {
  EXPECT_EQ(JsonValue().dump(), "null");
  EXPECT_EQ(JsonValue(true).dump(), "true");
  EXPECT_EQ(JsonValue(42).dump(), "42");
  EXPECT_EQ(JsonValue(-7LL).dump(), "-7");
  EXPECT_EQ(JsonValue(0.5).dump(), "0.5");
  EXPECT_EQ(JsonValue(2.0).dump(), "2.0");
  EXPECT_EQ(JsonValue("hi").dump(), "\"hi\"");
}

TEST(JsonValueTest, NonFiniteNumbersBecomeNull) {
  EXPECT_EQ(JsonValue(std::numeric_limits<double>::infinity()).dump(), "null");
  EXPECT_EQ(JsonValue(std::numeric_limits<double>::quiet_NaN()).dump(), "null");
}

TEST(JsonValueTest, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(json_quote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

TEST(JsonValueTest, ObjectsKeepInsertionOrderAndReplaceInPlace) {
  JsonValue object = JsonValue::object();
  object.set("z", 1);
  object.set("a", 2);
  object.set("z", 3);
  EXPECT_EQ(object.dump(), "{\"z\":3,\"a\":2}");
  ASSERT_NE(object.find("a"), nullptr);
  EXPECT_EQ(object.find("a")->dump(), "2");
  EXPECT_EQ(object.find("missing"), nullptr);
}

TEST(JsonValueTest, PrettyPrintsNestedValues) {
  JsonValue root = JsonValue::object();
  JsonValue list = JsonValue::array();
  list.push_back(1);
  list.push_back("x");
  root.set("list", list);
  root.set("empty", JsonValue::object());
  EXPECT_EQ(root.dump(2), "{\n  \"list\": [\n    1,\n    \"x\"\n  ],\n  \"empty\": {}\n}");
}

TEST(JsonValueTest, MisuseThrows) {
  JsonValue number = 1;
  EXPECT_THROW(number.set("a", 1), std::logic_error);
  EXPECT_THROW(number.push_back(1), std::logic_error);
}

TEST(JsonValueTest, DoublesRoundTrip) {
  const double value = 0.1 + 0.2;
  EXPECT_EQ(std::stod(JsonValue(value).dump()), value);
}

#ifdef MOESIM_TEST_HAVE_NLOHMANN_JSON
TEST(JsonValueTest, OutputParsesAsStandardJson) {
  JsonValue root = JsonValue::object();
  root.set("schema_version", 1);
  root.set("name", "tab\there \"quoted\" \xc3\xa9");
  JsonValue results = JsonValue::array();
  JsonValue row = JsonValue::object();
  row.set("time_us", 12.25);
  row.set("bad", std::numeric_limits<double>::infinity());
  results.push_back(row);
  root.set("results", results);
  for (int indent : {-1, 2}) {
    const nlohmann::json parsed = nlohmann::json::parse(root.dump(indent));
    EXPECT_EQ(parsed["schema_version"], 1);
    EXPECT_EQ(parsed["name"], "tab\there \"quoted\" \xc3\xa9");
    EXPECT_DOUBLE_EQ(parsed["results"][0]["time_us"].get<double>(), 12.25);
    EXPECT_TRUE(parsed["results"][0]["bad"].is_null());
  }
}
#endif

}  // namespace
}  // namespace moesim::kernels
