// Published figures are data: the expression language of validate/published/*.json, checked by hand.
#include "moesim/validate/Published.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moesim/common/Error.hpp"

using namespace moesim;
using namespace moesim::validate;

namespace {
std::string write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string file_with_rows(const std::string& rows) {
  return R"({"schema_version": 1, "document": "test", "groups": [{"source": "S", "scenario": "X",
    "flags": {"model": "deepseek-v2-lite", "hw": "h100", "phase": "forward", "ep": 8, "tokens": 4096, "seq": 4096,
              "layers": 2, "power": "off"},
    "rows": [)" +
         rows + "]}]}";
}
}  // namespace

TEST(Published, ExpressionsOfNumbersAreArithmetic) {
  // ratio 6/3 = 2; gain_pct of 3 over 2 = 50%; min/max of a list; FlashMoE Table 3's Mixtral row:
  // 4 · 8 experts · ceil(32768/8) = 4096 rows (a multiple of 128) · 4096 hidden · 4 bytes = 2 GiB.
  const auto rows = evaluate_published_file(write_file("published_numbers.json", file_with_rows(R"(
    {"metric": "a", "published": {"ratio": [6, 3]}, "predicted": {"gain_pct": [3, 2]}},
    {"metric": "b", "published": {"min": [4, 2, 9]}, "predicted": {"max": [4, 2, 9]}},
    {"metric": "c", "published": 2.0, "predicted": {"formula": "flashmoe_symmetric_tensor_gib",
      "args": {"tokens": 32768, "experts": 8, "hidden": 4096, "element_bytes": 4, "tile_m": 128}}})")));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].published, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].predicted, 50.0);
  EXPECT_DOUBLE_EQ(rows[1].published, 2.0);
  EXPECT_DOUBLE_EQ(rows[1].predicted, 9.0);
  EXPECT_DOUBLE_EQ(rows[2].predicted, 2.0);
  EXPECT_EQ(rows[2].source, "S");
}

TEST(Published, AValueIsTheMetricOfTheGroupsFlagsPlusItsOwn) {
  // The same simulation asked twice gives one number; a speedup of a schedule over itself is 1 exactly.
  const auto rows = evaluate_published_file(write_file("published_values.json", file_with_rows(R"(
    {"metric": "self", "published": 1,
     "predicted": {"ratio": [{"value": "step_ms", "flags": {"schedule": "farskip"}},
                             {"value": "step_ms", "flags": {"schedule": "farskip"}}]}},
    {"metric": "layers", "published": 1,
     "predicted": {"ratio": [{"value": "step_ms", "flags": {"layers": 2}},
                             {"value": "layer_ms", "flags": {"layers": 2}}]}})")));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].predicted, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].predicted, 2.0);  // step / layer = the 2 layers
}

TEST(Published, MistakesNameTheFileAndPointer) {
  auto error_of = [](const std::string& rows) {
    try {
      evaluate_published_file(write_file("published_bad.json", file_with_rows(rows)));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("<none>");
  };
  EXPECT_NE(error_of(R"({"metric": "m", "published": {"mean": [1]}, "predicted": 1})")
                .find("/groups/0/rows/0/published"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"metric": "m", "published": 1, "predicted": {"value": "nope"}})").find("not a metric"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"metric": "m", "published": 1, "predicted": 1, "extra": 0})").find("extra"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"metric": "m", "published": {"ratio": [1, 0]}, "predicted": 1})").find("divides by zero"),
      std::string::npos);
}

TEST(Published, EveryShippedFileEvaluates) {
  // Each shipped file parses and names only known metrics and flags (the values are the validation table's).
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MOESIM_TEST_DATA_DIR) + "/validate/published")) {
    if (entry.path().extension() != ".json") continue;
    const auto rows = evaluate_published_file(entry.path().string());
    EXPECT_FALSE(rows.empty()) << entry.path();
  }
}
