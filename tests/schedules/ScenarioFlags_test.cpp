// Scenario flags set by name (sweep axes, data files) follow the CLI's rules and name the flag on error.
#include "moesim/schedules/ScenarioFlags.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {
std::string error_of(const std::string& flag, const std::string& value) {
  ScenarioFlags f;
  try {
    f.set(flag, value);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ScenarioFlags, SetsEachKindOfFlagFromText) {
  ScenarioFlags f;
  f.set("model", "qwen3-30b-a3b");
  f.set("ep", "4");
  f.set("capacity-factor", "1.25");
  f.set("per-rank", "true");
  f.set("opt", "shared_overlap=off;sync_splits=off");
  f.set("seq", "2048");
  f.set("tokens", "8192");
  EXPECT_EQ(f.model, "qwen3-30b-a3b");
  EXPECT_EQ(f.ep, 4);
  EXPECT_DOUBLE_EQ(f.capacity_factor, 1.25);
  EXPECT_TRUE(f.per_rank);
  EXPECT_EQ(f.opts, (std::vector<std::string>{"shared_overlap=off", "sync_splits=off"}));
  const Scenario s = make_scenario(f);
  EXPECT_EQ(s.parallel.ep, 4);
  EXPECT_EQ(s.workload.tokens, 8192);
  EXPECT_EQ(s.workload.seq_len, 2048);
  EXPECT_EQ(s.options.at("shared_overlap"), "off");
}

TEST(ScenarioFlags, BadValuesNameTheFlag) {
  EXPECT_NE(error_of("ep", "0").find("--ep"), std::string::npos);
  EXPECT_NE(error_of("ep", "eight").find("--ep"), std::string::npos);
  EXPECT_NE(error_of("capacity-factor", "nan").find("--capacity-factor"), std::string::npos);
  EXPECT_NE(error_of("capacity-factor", "1e308").find("--capacity-factor"), std::string::npos);
  EXPECT_NE(error_of("per-rank", "maybe").find("--per-rank"), std::string::npos);
  EXPECT_NE(error_of("no-such-flag", "1").find("--no-such-flag"), std::string::npos);
}

TEST(ScenarioFlags, MicroBatchTimesSequenceObeysTheTokensLimit) {
  ScenarioFlags f;
  f.set("mbs", "1024");
  f.set("seq", "4096");  // 2^22 tokens > 2^20
  EXPECT_THROW(make_scenario(f), ConfigError);
  f.set("degree", "0");
  f.set("mbs", "1");
  EXPECT_THROW(make_scenario(f), ConfigError);  // a degree is >= 1 or auto
}
