// Inputs are regular files within their limit; outputs are written whole or not at all.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "moesim/common/Error.hpp"
#include "moesim/common/InputFile.hpp"
#include "moesim/common/OutputFile.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "moesim_io_test";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove_all(p);
  return p;
}

std::string read_error(const std::string& path, InputKind kind = InputKind::SPEC) {
  try {
    read_input_file(path, kind);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<read>";
}

std::string contents(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(InputFile, OnlyRegularFilesAreRead) {
  // A FIFO blocked the open, /dev/zero read forever, a directory read as empty.
  const fs::path fifo = scratch("fifo.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_error(fifo.string()), fifo.string() + ": is a FIFO, not a regular file");
  EXPECT_EQ(read_error("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(read_error(fs::temp_directory_path().string()),
            fs::temp_directory_path().string() + ": is a directory, not a regular file");
  EXPECT_EQ(read_error("/no/such.json"),
            "/no/such.json: cannot be opened for reading: No such file or directory");
}

TEST(InputFile, SizesPastTheLimitAreRefusedBeforeTheyAreRead) {
  const fs::path big = scratch("big.json");
  { std::ofstream(big) << std::string(2 * 1024 * 1024 + 1, ' '); }
  setenv("MOESIM_MAX_INPUT_MB", "2", 1);
  EXPECT_EQ(read_error(big.string()), big.string() +
                                          ": is 3 MiB, more than the 2 MiB limit for descriptions "
                                          "(docs/limits.md; MOESIM_MAX_INPUT_MB raises it)");
  setenv("MOESIM_MAX_INPUT_MB", "3", 1);
  EXPECT_EQ(read_error(big.string()), "<read>");
  setenv("MOESIM_MAX_INPUT_MB", "nan", 1);
  EXPECT_EQ(read_error(big.string()),
            "<input>: MOESIM_MAX_INPUT_MB = \"nan\": expected a whole number in [1, 65536] (docs/limits.md)");
  unsetenv("MOESIM_MAX_INPUT_MB");
  EXPECT_EQ(input_limit_bytes(InputKind::SPEC), 16u << 20);
  EXPECT_EQ(input_limit_bytes(InputKind::DATA), 512u << 20);
}

TEST(OutputFile, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  const fs::path dir = scratch("atomic");  // a folder of its own: the test counts its files
  fs::create_directories(dir);
  const fs::path out = dir / "result.json";
  write_file_atomically(out.string(), [](std::ostream& o) { o << "old\n"; });
  ASSERT_EQ(contents(out), "old\n");
  // RLIMIT_FSIZE stands in for a full disk: the write fails (EFBIG) past 4 KiB, as ENOSPC would.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit previous{};
  getrlimit(RLIMIT_FSIZE, &previous);
  rlimit small = previous;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    write_file_atomically(out.string(), [](std::ostream& o) { o << std::string(100000, 'x'); });
  } catch (const ConfigError& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &previous);
  EXPECT_EQ(error, out.string() + ": could not be written: File too large");
  EXPECT_EQ(contents(out), "old\n");  // not torn, not empty
  EXPECT_EQ(std::distance(fs::directory_iterator(out.parent_path()), fs::directory_iterator()), 1);
}

TEST(OutputFile, NewFilesNeverReplaceOldOnes) {
  const fs::path out = scratch("profile.json");
  fs::remove(out.string() + ".1");
  EXPECT_EQ(write_new_file_atomically(out.string(), [](std::ostream& o) { o << "a"; }), out.string());
  EXPECT_EQ(write_new_file_atomically(out.string(), [](std::ostream& o) { o << "b"; }), out.string() + ".1");
  EXPECT_EQ(contents(out), "a");
  EXPECT_EQ(contents(out.string() + ".1"), "b");
}

TEST(OutputFile, OutputsAreCheckedBeforeTheRun) {
  const fs::path dir = scratch("outputs");
  fs::create_directories(dir);
  const std::string a = (dir / "a.json").string(), input = (dir / "model.json").string();
  { std::ofstream(input) << "{}"; }
  EXPECT_THROW(check_output_path("--json", (dir / "no/x.json").string()), ConfigError);
  EXPECT_THROW(check_output_path("--json", dir.string()), ConfigError);
  EXPECT_NO_THROW(check_output_path("--json", a));
  try {
    check_distinct_paths({{"--json", a}, {"--trace", (dir / "." / "a.json").string()}}, {});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "<input>: --trace = \"" + (dir / "." / "a.json").string() +
                                         "\": is also the output of --json (each output needs its own file)");
  }
  EXPECT_THROW(check_distinct_paths({{"--json", input}}, {{"--model", input}}), ConfigError);
  EXPECT_NO_THROW(check_distinct_paths({{"--json", "-"}, {"--trace", "-"}}, {{"--model", input}}));
}
