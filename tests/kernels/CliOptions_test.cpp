#include "moesim/kernels/CliOptions.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace moesim::kernels {
namespace {

struct Options {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 1ULL << 20;
  std::int64_t iters = 20;
  double factor = 2;
  bool check = false;
  std::string output;
  std::vector<std::int64_t> gpus{1};
  std::vector<std::string> maths{"tf32"};
};

CliOptions make_parser(Options& options) {
  CliOptions parser("bench", "test bench");
  parser.add_bytes("minbytes", 'b', &options.min_bytes, "smallest size");
  parser.add_bytes("maxbytes", 'e', &options.max_bytes, "largest size");
  parser.add_int("iters", 'n', &options.iters, "timed iterations", 1);
  parser.add_double("stepfactor", 'f', &options.factor, "size multiplier");
  parser.add_flag("check", 'c', &options.check, "verify");
  parser.add_string("output", 'J', &options.output, "json file");
  parser.add_int_list("gpus", 0, &options.gpus, "gpu counts");
  parser.add_string_list("maths", 0, &options.maths, "operand types");
  return parser;
}

bool parse(CliOptions& parser, std::vector<const char*> argv) {
  return parser.parse(static_cast<int>(argv.size()), argv.data());
}

// The forms nccl-tests' scripts and run_calibration.sh write: -b 8 -e 1G, --name=value, lists.
TEST(CliOptionsTest, ParsesShortLongAndInlineForms) {
  Options options;
  CliOptions parser = make_parser(options);
  EXPECT_TRUE(parse(parser, {"bench", "-b", "4K", "--maxbytes=1G", "-n", "5", "--stepfactor", "4", "-c", "-J",
                             "out.json", "--gpus=2,4", "--maths", "tf32,bf16"}));
  EXPECT_EQ(options.min_bytes, 4096u);
  EXPECT_EQ(options.max_bytes, 1ULL << 30);
  EXPECT_EQ(options.iters, 5);
  EXPECT_DOUBLE_EQ(options.factor, 4);
  EXPECT_TRUE(options.check);
  EXPECT_EQ(options.output, "out.json");
  EXPECT_EQ(options.gpus, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(options.maths, (std::vector<std::string>{"tf32", "bf16"}));
  EXPECT_EQ(parser.command_line().size(), 14u);
}

TEST(CliOptionsTest, KeepsDefaultsAndReportsHelp) {
  Options options;
  CliOptions parser = make_parser(options);
  EXPECT_FALSE(parse(parser, {"bench", "--help"}));
  EXPECT_EQ(options.iters, 20);
  const std::string usage = parser.usage();
  EXPECT_NE(usage.find("--minbytes"), std::string::npos);
  EXPECT_NE(usage.find("1M"), std::string::npos);  // the default, in the unit it was written in
}

TEST(CliOptionsTest, RejectsBadInput) {
  Options options;
  CliOptions parser = make_parser(options);
  EXPECT_THROW(parse(parser, {"bench", "--nope"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "-n"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "-n", "0"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "-n", "3x"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "-b", "12Q"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "-b", "-4K"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "--check=no"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "stray"}), ArgError);
  EXPECT_THROW(parse(parser, {"bench", "--gpus", "2,,x"}), ArgError);
}

TEST(CliOptionsTest, ValuesAsJsonListEveryOption) {
  Options options;
  CliOptions parser = make_parser(options);
  ASSERT_TRUE(parse(parser, {"bench", "-n", "7"}));
  const Json values = parser.values_as_json();
  EXPECT_EQ(
      values.dump(),
      R"({"minbytes":8,"maxbytes":1048576,"iters":7,"stepfactor":2.0,"check":false,"output":"","gpus":[1],"maths":["tf32"]})");
}

TEST(CliOptionsTest, DuplicateDeclarationIsALogicError) {
  bool flag = false;
  CliOptions parser("bench", "");
  parser.add_flag("check", 'c', &flag, "");
  EXPECT_THROW(parser.add_flag("check", 'x', &flag, ""), std::logic_error);
  EXPECT_THROW(parser.add_flag("other", 'c', &flag, ""), std::logic_error);
}

}  // namespace
}  // namespace moesim::kernels
