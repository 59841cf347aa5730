// Every committed corpus input, through its target, in every build: the fuzzers' seeds and past findings
// stay fixed without clang. An input may end in success or a typed input error, nothing else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "FuzzTargets.hpp"

namespace fs = std::filesystem;
using moesim::fuzz::FuzzTarget;

namespace moesim::fuzz {
// Test names and failure messages show the target's name, not its bytes.
void PrintTo(const FuzzTarget& target, std::ostream* out) {
  *out << target.name;
}
}  // namespace moesim::fuzz

namespace {

const fs::path kCorpus = MOESIM_FUZZ_CORPUS_DIR;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class CorpusReplay : public testing::TestWithParam<FuzzTarget> {};

TEST_P(CorpusReplay, EveryInputEndsInSuccessOrATypedError) {
  const FuzzTarget& target = GetParam();
  const fs::path folder = kCorpus / target.name;
  ASSERT_TRUE(fs::is_directory(folder)) << folder << ": every target needs seeds";
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    ++inputs;
    try {
      moesim::fuzz::run_fuzz_target(target, read(entry.path()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GT(inputs, 0) << folder;
}

INSTANTIATE_TEST_SUITE_P(Loaders, CorpusReplay, testing::ValuesIn(moesim::fuzz::fuzz_targets()),
                         [](const testing::TestParamInfo<FuzzTarget>& param) {
                           return std::string(param.param.name);
                         });

TEST(CorpusReplay, EveryCorpusFolderNamesATarget) {
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    EXPECT_NE(moesim::fuzz::find_fuzz_target(entry.path().filename().string()), nullptr) << entry.path();
  }
}

}  // namespace
