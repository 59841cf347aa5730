#include "moesim/kernels/ExclusiveFile.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace moesim::kernels {
namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ExclusiveFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("moesim_exclusive_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::filesystem::path folder_;
};

TEST_F(ExclusiveFileTest, NeverOverwritesAndNumbersTheNextName) {
  const std::string base = (folder_ / "gemm.json").string();
  {
    ExclusiveFile first(base);
    first.write("first");
    first.close();
    EXPECT_EQ(first.path(), base);
  }
  ExclusiveFile second(base);
  second.write("second");
  second.close();
  ExclusiveFile third(base);
  third.close();
  EXPECT_EQ(second.path(), base + ".1");
  EXPECT_EQ(third.path(), base + ".2");
  EXPECT_EQ(read_all(base), "first");
  EXPECT_EQ(read_all(base + ".1"), "second");
}

TEST_F(ExclusiveFileTest, GivesUpWhenAllNamesAreTaken) {
  const std::string base = (folder_ / "x").string();
  ExclusiveFile a(base, 1);
  ExclusiveFile b(base, 1);
  EXPECT_THROW(ExclusiveFile(base, 1), std::runtime_error);
}

TEST_F(ExclusiveFileTest, MissingFolderIsAnError) {
  EXPECT_THROW(ExclusiveFile((folder_ / "no" / "such" / "x").string()), std::runtime_error);
}

}  // namespace
}  // namespace moesim::kernels
