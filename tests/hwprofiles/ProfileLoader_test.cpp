// Name resolution (calibrated wins), data dir selection and the JSON writer's round trip.
#include "moesim/hwprofiles/ProfileLoader.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>  // setenv / unsetenv (POSIX)
#include <unistd.h>  // getpid

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "TinyProfile.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileWriter.hpp"

namespace fs = std::filesystem;
using moesim::ConfigError;
using moesim::hw::load_profile;
using moesim::hw::shipped_profile_names;
using moesim::hw::testing::tiny_power_section;
using moesim::hw::testing::tiny_profile_document;

namespace {

/** A throw-away data dir with hwprofiles/profiles/ inside, removed after the test. */
class TempDataDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("moesim_hw_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::create_directories(profiles());
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path profiles() const { return root_ / "hwprofiles" / "profiles"; }

  /** Writes the tiny profile under `file_name` with `name` and `kind` changed. */
  void write_profile(const std::string& file_name, const std::string& name,
                     const std::string& kind = "datasheet") {
    auto document = tiny_profile_document();
    document["name"] = name;
    document["provenance"]["kind"] = kind;
    if (kind == "calibrated") {
      document["provenance"]["date"] = "2026-11-21";
      document["provenance"]["device"] = "test device";
      document["provenance"]["driver"] = "test driver";
      document["provenance"]["libraries"] = "test libraries";
    }
    std::ofstream(profiles() / file_name) << document.dump(2);
  }

  fs::path root_;
};

}  // namespace

TEST_F(TempDataDir, CalibratedProfileWinsOverTheShippedOne) {
  write_profile("foo.json", "foo");
  write_profile("foo.calibrated.json", "foo-calibrated", "calibrated");
  auto profile = load_profile("foo", root_);
  EXPECT_EQ(profile.name, "foo-calibrated");
  EXPECT_EQ(profile.provenance.kind, moesim::hw::ProvenanceKind::CALIBRATED);
  EXPECT_EQ(profile.source_file, (profiles() / "foo.calibrated.json").string());

  fs::remove(profiles() / "foo.calibrated.json");
  EXPECT_EQ(load_profile("foo", root_).name, "foo");
}

TEST_F(TempDataDir, ExplicitPathIsReadAsGivenEvenWhenACalibratedOneExists) {
  write_profile("foo.json", "foo");
  write_profile("foo.calibrated.json", "foo-calibrated", "calibrated");
  EXPECT_EQ(load_profile((profiles() / "foo.json").string(), root_).name, "foo");
  try {
    load_profile("missing.json", root_);
    FAIL() << "missing file accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "missing.json: cannot be opened for reading: No such file or directory");
  }
}

TEST_F(TempDataDir, NamesAreListedOnceAndSorted) {
  write_profile("foo.json", "foo");
  write_profile("foo.calibrated.json", "foo-calibrated", "calibrated");
  write_profile("bar.calibrated.json", "bar", "calibrated");
  std::ofstream(profiles() / "README.txt") << "not a profile";
  EXPECT_EQ(shipped_profile_names(root_), (std::vector<std::string>{"bar", "foo"}));
}

TEST_F(TempDataDir, UnknownNameListsTheShippedOnes) {
  write_profile("foo.json", "foo");
  write_profile("bar.json", "bar");
  try {
    load_profile("h900", root_);
    FAIL() << "unknown profile accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              profiles().string() + ": has no hardware profile named 'h900' (shipped: bar, foo)");
  }
}

TEST_F(TempDataDir, EnvironmentVariableOverridesTheBuiltInDataDir) {
  write_profile("foo.json", "foo-from-env");
  const char* outer = std::getenv("MOESIM_DATA_DIR");
  const std::string saved = outer ? outer : "";
  ASSERT_EQ(setenv("MOESIM_DATA_DIR", root_.c_str(), 1), 0);
  EXPECT_EQ(moesim::hw::default_data_dir(), root_);
  EXPECT_EQ(load_profile("foo").name, "foo-from-env");
  EXPECT_EQ(shipped_profile_names(), (std::vector<std::string>{"foo"}));
  unsetenv("MOESIM_DATA_DIR");
  EXPECT_EQ(moesim::hw::default_data_dir(), fs::path(MOESIM_TEST_DATA_DIR));
  if (!saved.empty()) setenv("MOESIM_DATA_DIR", saved.c_str(), 1);
}

TEST(ProfileWriter, RoundTripKeepsEveryValue) {
  const auto original = load_profile("mi300x", MOESIM_TEST_DATA_DIR);
  const auto text = moesim::hw::profile_to_json(original).dump(2);
  const auto reread = moesim::hw::profile_from_json(nlohmann::json::parse(text), "roundtrip.json");
  // Writing the re-read profile again must give the same text: nothing lost, nothing reordered.
  EXPECT_EQ(moesim::hw::profile_to_json(reread).dump(2), text);
  EXPECT_DOUBLE_EQ(reread.gpu.launch_overhead_s, original.gpu.launch_overhead_s);
  EXPECT_DOUBLE_EQ(reread.network.nic_bw_Bps, original.network.nic_bw_Bps);
  ASSERT_EQ(reread.collectives.size(), original.collectives.size());
  EXPECT_DOUBLE_EQ(reread.collectives[5].step_latency_s, original.collectives[5].step_latency_s);
  // The first keys appear in FORMAT.md order.
  EXPECT_EQ(text.substr(0, 30), "{\n  \"schema_version\": 1,\n  \"na");
}

TEST(ProfileWriter, GemmShapesRoundTripAfterTheTable) {
  auto document = tiny_profile_document();
  EXPECT_FALSE(moesim::hw::profile_to_json(moesim::hw::profile_from_json(document, "tiny.json"))["efficiency"]
                   .contains("gemm_shapes"));
  document["efficiency"]["gemm_shapes"] = {
      {"shapes", {{{"n", 1536}, {"k", 2048}, {"m", {256, 1024}}, {"value", {0.25, 0.6}}}}},
      {"source", "test"}};
  const auto written = moesim::hw::profile_to_json(moesim::hw::profile_from_json(document, "tiny.json"));
  const auto& efficiency = written["efficiency"];
  const auto& shape = efficiency["gemm_shapes"]["shapes"][0];
  EXPECT_EQ(shape["n"].get<std::int64_t>(), 1536);
  EXPECT_EQ(shape["k"].get<std::int64_t>(), 2048);
  EXPECT_EQ(shape["m"].get<std::vector<double>>(), (std::vector<double>{256, 1024}));
  EXPECT_EQ(shape["value"].get<std::vector<double>>(), (std::vector<double>{0.25, 0.6}));
  EXPECT_EQ(efficiency["gemm_shapes"]["source"].get<std::string>(), "test");
  EXPECT_EQ(std::next(efficiency.begin()).key(), "gemm_shapes");  // right after the table it refines
  const auto reread = moesim::hw::profile_from_json(nlohmann::json::parse(written.dump(2)), "roundtrip.json");
  ASSERT_EQ(reread.efficiency.gemm_shapes.shapes.size(), 1u);
  EXPECT_DOUBLE_EQ(reread.gemm_efficiency(1024, 1536, 2048), 0.6);
}

TEST(ProfileWriter, PowerSectionRoundTripsInFileUnits) {
  auto document = tiny_profile_document();
  EXPECT_FALSE(moesim::hw::profile_from_json(document, "tiny.json").power.present);
  // Absent stays absent: the writer adds no empty section.
  EXPECT_FALSE(
      moesim::hw::profile_to_json(moesim::hw::profile_from_json(document, "tiny.json")).contains("power"));

  document["power"] = tiny_power_section();
  document["power"]["hbm_pj_per_byte"] = 103.4;
  const auto profile = moesim::hw::profile_from_json(document, "tiny.json");
  const moesim::hw::PowerSpec& w = profile.power;
  EXPECT_TRUE(w.present);
  EXPECT_DOUBLE_EQ(w.limit_w, 700);
  EXPECT_DOUBLE_EQ(w.idle_w, 100);
  EXPECT_DOUBLE_EQ(w.compute_w_at_peak, 1000);
  EXPECT_DOUBLE_EQ(w.hbm_j_per_byte, 103.4e-12);  // picojoules in the file, joules in the struct
  EXPECT_DOUBLE_EQ(w.link_j_per_byte, 50e-12);
  EXPECT_DOUBLE_EQ(w.speed_exponent, 2.5);
  EXPECT_DOUBLE_EQ(w.clock_rate_exponent, 0.6);
  EXPECT_EQ(w.source, "test");

  const auto written = moesim::hw::profile_to_json(profile);
  ASSERT_TRUE(written.contains("power"));
  EXPECT_EQ(written["power"]["hbm_pj_per_byte"].get<double>(), 103.4);  // no last-bit noise
  EXPECT_EQ(written.back().dump(), written["power"].dump());            // the last section
  const auto reread = moesim::hw::profile_from_json(nlohmann::json::parse(written.dump(2)), "roundtrip.json");
  EXPECT_EQ(moesim::hw::profile_to_json(reread).dump(2), written.dump(2));
  EXPECT_DOUBLE_EQ(reread.power.hbm_j_per_byte, w.hbm_j_per_byte);
}
