#include "moesim/kernels/ResultLog.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace moesim::kernels {
namespace {

class ResultLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::temp_directory_path() /
        ("moesim_resultlog_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::string read(const std::string& name) {
    std::ifstream in(folder_ / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::filesystem::path folder_;
};

TEST(UtcTimestampTest, IsIso8601Utc) {
  EXPECT_TRUE(std::regex_match(utc_timestamp_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST_F(ResultLogTest, TextHasHashHeaderAndPlainRows) {
  std::ostringstream text;
  ResultLog log({"gemm", "0.1.0", "abc123"}, {"gemm_bench", "-n", "5"}, Json::object(), text, "");
  log.comment("Device 0: test");
  log.warning("clocks not locked");
  log.start_table(TextTable({{"size", "B", 5}}));
  log.add_row({"8"}, Json::object());
  log.finish();
  EXPECT_EQ(text.str(),
            "# Device 0: test\n# ***WARNING*** clocks not locked\n#\n#  size\n#   (B)\n      8\n");
  EXPECT_TRUE(log.json_path().empty());
}

TEST_F(ResultLogTest, RowBeforeTableIsALogicError) {
  std::ostringstream text;
  ResultLog log({"gemm", "0.1.0", "abc"}, {}, Json::object(), text, "");
  EXPECT_THROW(log.add_row({"1"}, Json::object()), std::logic_error);
}

TEST_F(ResultLogTest, JsonFileIsClaimedExclusively) {
  const std::string path = (folder_ / "r.json").string();
  std::ostringstream text;
  ResultLog first({"gemm", "0.1.0", "abc"}, {}, Json::object(), text, path);
  ResultLog second({"gemm", "0.1.0", "abc"}, {}, Json::object(), text, path);
  EXPECT_EQ(first.json_path(), path);
  EXPECT_EQ(second.json_path(), path + ".1");
}

TEST_F(ResultLogTest, JsonCarriesProvenanceAndRows) {
  const std::string path = (folder_ / "r.json").string();
  std::ostringstream text;
  {
    Json options = Json::object();
    options["iters"] = 5;
    ResultLog log({"memory", "0.1.0", "deadbee"}, {"memory_bench", "-n", "5"}, options, text, path);
    log.add_context("driver", "580.1");
    log.start_table(TextTable({{"size", "B", 5}}));
    Json row = Json::object();
    row["bytes"] = 8;
    log.add_row({"8"}, row);
    log.set_summary("pass", true);
    log.finish();
  }
  const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(read("r.json"));
  EXPECT_EQ(parsed.begin().key(), "schema_version");
  EXPECT_EQ(parsed["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(parsed["git_sha"], "deadbee");
  EXPECT_EQ(parsed["benchmark"], "memory");
  EXPECT_EQ(parsed["args"][2], "5");
  EXPECT_EQ(parsed["options"]["iters"], 5);
  EXPECT_EQ(parsed["driver"], "580.1");
  EXPECT_EQ(parsed["results"][0]["bytes"], 8);
  EXPECT_EQ(parsed["summary"]["pass"], true);
  EXPECT_EQ(parsed["complete"], true);
  EXPECT_TRUE(parsed.contains("start_time"));
}

TEST_F(ResultLogTest, UnfinishedLogStillWritesIncompleteJson) {
  const std::string path = (folder_ / "r.json").string();
  std::ostringstream text;
  { ResultLog log({"memory", "0.1.0", "x"}, {}, Json::object(), text, path); }
  EXPECT_EQ(nlohmann::json::parse(read("r.json"))["complete"], false);
}

}  // namespace
}  // namespace moesim::kernels
