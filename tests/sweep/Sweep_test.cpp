#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "moesim/common/Error.hpp"
#include "moesim/sweep/ResultLog.hpp"
#include "moesim/sweep/Runner.hpp"
#include "moesim/sweep/Shard.hpp"
#include "moesim/sweep/SweepSpec.hpp"

using namespace moesim;
using namespace moesim::sweep;

TEST(SweepSpec, CartesianZipFilterAndRanges) {
  // ep zipped with nodes: 3 pairs (8,1) (16,2) (32,4), all with ep <= nodes·8; schedule: 2; seq 1024, 2048,
  // 4096 of which "seq >= 2048" keeps 2. So 3 · 2 · 2 = 12 points, the last axis varying fastest.
  auto spec = parse_sweep(R"({"schema_version": 1, "base": {"model": "m", "layers": 2},
      "axes": {"ep": [8, 16, 32], "nodes": [1, 2, 4], "schedule": ["regular", "farskip"],
               "seq": {"from": 1024, "to": 4096, "mul": 2}},
      "zip": [["ep", "nodes"]], "filter": ["ep <= nodes * 8", "seq >= 2048"]})",
                          "s.json");
  auto points = expand(spec);
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points.front().id, "ep=8,nodes=1,schedule=regular,seq=2048");
  EXPECT_EQ(points.front().params.at("model"), "m");
  EXPECT_EQ(points.back().id, "ep=32,nodes=4,schedule=farskip,seq=4096");
}

TEST(Shard, ShardsAreDisjointCoveringAndInterleaved) {
  // 7 points over 3 shards: indices {0,3,6}, {1,4}, {2,5}.
  std::vector<Point> points;
  for (int i = 0; i < 7; ++i) points.push_back({"p" + std::to_string(i), {}, {}});
  std::vector<std::vector<std::string>> ids;
  for (int k = 1; k <= 3; ++k) {
    ids.emplace_back();
    for (const auto& p : select_shard(points, parse_shard(std::to_string(k) + "/3")))
      ids.back().push_back(p.id);
  }
  EXPECT_EQ(ids[0], (std::vector<std::string>{"p0", "p3", "p6"}));
  EXPECT_EQ(ids[1], (std::vector<std::string>{"p1", "p4"}));
  EXPECT_EQ(ids[2], (std::vector<std::string>{"p2", "p5"}));
  EXPECT_EQ(select_shard(points, parse_shard("1/1")).size(), 7u);
  EXPECT_TRUE(select_shard(points, parse_shard("9/9")).empty());
  for (const char* bad : {"0/3", "4/3", "3", "1/0", "-1/3", "1/3x", "/3", ""})
    EXPECT_THROW(parse_shard(bad), ConfigError) << bad;
}

TEST(SweepSpec, BadFilesNameThePointer) {
  try {
    parse_sweep(R"({"schema_version": 1, "axes": {"ep": [8]}, "zip": [["ep", "nodes"]]})", "z.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "z.json: /zip/0/1 must name an axis");
  }
  EXPECT_THROW(parse_sweep(R"({"schema_version": 1, "axes": {}})", "e.json"), ConfigError);
  EXPECT_THROW(parse_sweep(R"({"schema_version": 1, "axes": {"ep": [8]}, "typo": 1})", "t.json"),
               ConfigError);
  EXPECT_THROW(passes("ep ~ 3", {{"ep", "8"}}, "f.json"), ConfigError);
}

namespace {
std::filesystem::path temp_file(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("moesim_sweep_test_" + name);
  std::filesystem::remove(p);
  return p;
}
Row row(const std::string& id, double v) {
  Row r;
  r.id = id;
  r.axis_values = {{"ep", id}};
  r.metrics = {{"step_ms", v}};
  return r;
}
}  // namespace

TEST(ResultLog, NeverOverwritesAndResumesDroppingATornLine) {
  for (const char* ext : {".csv", ".jsonl"}) {
    auto path = temp_file(std::string("resume") + ext).string();
    {
      ResultLog log(path, {"ep"}, {"step_ms"}, false);
      log.append(row("8", 1.5));
      log.append(row("16", 2.25));
    }
    EXPECT_THROW(ResultLog(path, {"ep"}, {"step_ms"}, false), ConfigError);
    { std::ofstream(path, std::ios::app) << "\"3"; }  // a kill in the middle of a row
    ResultLog resumed(path, {"ep"}, {"step_ms"}, true);
    EXPECT_EQ(resumed.finished(), (std::set<std::string>{"8", "16"}));
    auto rows = resumed.read_all();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_DOUBLE_EQ(rows[1].metrics.at("step_ms"), 2.25);
  }
}

TEST(ResultLog, FinalizeSortsIntoPointOrder) {
  auto path = temp_file("order.csv").string();
  ResultLog log(path, {"ep"}, {"step_ms"}, false);
  log.append(row("16", 2));
  log.append(row("8", 1));
  std::vector<Point> order(2);
  order[0].id = "8";
  order[1].id = "16";
  log.finalize(order);
  auto rows = log.read_all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, "8");
  EXPECT_EQ(rows[1].id, "16");
}

TEST(Runner, StopsTakingPointsWhenInterruptedAndRecordsErrors) {
  auto path = temp_file("runner.jsonl").string();
  ResultLog log(path, {"ep"}, {"step_ms"}, false);
  std::vector<Point> points(10);
  for (int i = 0; i < 10; ++i) points[static_cast<std::size_t>(i)].id = std::to_string(i);
  std::atomic<bool> stop{false};
  int calls = 0;
  std::ostringstream progress;
  auto summary = run_sweep(
      points, 1,
      [&](const Point& p) {
        if (++calls == 4) stop.store(true);
        Row r = row(p.id, 1);
        r.ok = p.id != "1";
        r.error = r.ok ? "" : "bad point";
        return r;
      },
      log, stop, progress, false);
  EXPECT_EQ(calls, 4);
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_EQ(log.read_all().size(), 4u);
}

namespace {
std::string sweep_error(const std::string& text) {
  try {
    expand(parse_sweep(text, "s.json"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<accepted>";
}
}  // namespace

TEST(SweepSpec, RangesPastTheirCapOrTheDoubleGridAreErrorsNotCapped) {
  // 1..200000 by 1 is 200,000 values: more than the 100,000 an axis may have (it was silently cut).
  EXPECT_EQ(
      sweep_error(R"({"schema_version": 1, "axes": {"tokens": {"from": 1, "to": 200000, "step": 1}}})"),
      "s.json: /axes/tokens holds 200000 values, more than the 100000 an axis may have (docs/limits.md)");
  // 1e300 printed as an int64 wrapped to a negative number.
  EXPECT_EQ(sweep_error(R"({"schema_version": 1, "axes": {"tokens": {"from": 1, "to": 1e300, "mul": 2}}})"),
            "s.json: /axes/tokens/to = 1e+300: must be within +-1e15");
  // mul from 0 never grows: 0, 0, 0, ... was 100,000 copies of "0".
  EXPECT_EQ(sweep_error(R"({"schema_version": 1, "axes": {"tokens": {"from": 0, "to": 8, "mul": 2}}})"),
            "s.json: /axes/tokens/from must be > 0 for a range with \"mul\"");
}

TEST(SweepSpec, PointsAreCappedBeforeTheyAreMade) {
  // 400 x 400 = 160,000 points > 100,000 (3 axes of 100,000 would have been 10^15 points).
  EXPECT_EQ(
      sweep_error(R"({"schema_version": 1, "axes": {"a": {"from": 1, "to": 400, "step": 1},
                                                          "b": {"from": 1, "to": 400, "step": 1}}})"),
      "s.json: /axes expand to 160000 points, more than the 100000 a sweep may have (docs/limits.md; split "
      "it, or zip axes)");
  // Zipped, the same axes are 400 points.
  EXPECT_EQ(sweep_error(R"({"schema_version": 1, "axes": {"a": {"from": 1, "to": 400, "step": 1},
                            "b": {"from": 1, "to": 400, "step": 1}}, "zip": [["a", "b"]]})"),
            "<accepted>");
}

TEST(SweepSpec, IdsAreUniqueAndHoldNoControlCharacters) {
  // Two equal values made two rows with one id: the final file kept one of them.
  EXPECT_EQ(
      sweep_error(R"({"schema_version": 1, "axes": {"ep": [8, 16, 8]}})"),
      "s.json: /axes/ep/2 = \"8\": repeats value 0 of the axis (each value once, or results would collide)");
  // a = "1", b = "2,b=x" and a = "1,b=2", b = "x" both read "a=1,b=2,b=x".
  EXPECT_EQ(
      sweep_error(R"({"schema_version": 1, "axes": {"a": ["1", "1,b=2"], "b": ["x", "2,b=x"]}})"),
      "s.json: /axes give two points the same id \"a=1,b=2,b=x\" (a value holds \",\" or \"=\"): results "
      "would collide");
  // A newline tore the CSV row, and resume never found the point again.
  EXPECT_EQ(sweep_error("{\"schema_version\": 1, \"axes\": {\"opt\": [\"mode=a\\nb\"]}}"),
            "s.json: /axes/opt/0 = \"mode=a\\nb\": must not hold control characters");
  EXPECT_EQ(sweep_error(R"({"schema_version": 1, "axes": {"--ep": [8]}})"),
            "s.json: /axes/--ep is not a flag name (moesim simulate's flags without their dashes)");
}

TEST(Runner, AnUnwritableRowStopsTheSweepWithItsError) {
  auto path = temp_file("unwritable.csv").string();
  ResultLog log(path, {"ep"}, {"step_ms"}, false);
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);  // appends now fail: the path is a directory
  std::vector<Point> points(4);
  for (int i = 0; i < 4; ++i) points[static_cast<std::size_t>(i)].id = std::to_string(i);
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::ostringstream progress;
  try {
    run_sweep(
        points, 1,
        [&](const Point& p) {
          ++calls;
          return row(p.id, 1);
        },
        log, stop, progress, false);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be appended to: Is a directory"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(calls.load(), 1);  // no point starts after the first failed write
  std::filesystem::remove(path);
}

TEST(Runner, AnInterruptLeavesAPointStuckInItsSimulationBehind) {
  auto path = temp_file("stuck.csv").string();
  ResultLog log(path, {"ep"}, {"step_ms"}, false);
  std::vector<Point> points(3);
  for (int i = 0; i < 3; ++i) points[static_cast<std::size_t>(i)].id = std::to_string(i);
  std::atomic<bool> stop{false};
  auto release = std::make_shared<std::atomic<bool>>(false);
  std::ostringstream progress;
  // Point 1 simulates until released; the interrupt comes while it runs, and 50 ms of grace do not save it.
  const auto start = std::chrono::steady_clock::now();
  auto summary = run_sweep(
      points, 2,
      [release, &stop](const Point& p) {
        if (p.id == "1") {
          stop.store(true);
          while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return row(p.id, 1);
      },
      log, stop, progress, false, std::chrono::milliseconds(50));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.abandoned, 1u);
  EXPECT_LT(waited, 5.0);
  const auto rows = log.read_all();
  EXPECT_TRUE(std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.id == "1"; }));
  release->store(true);  // the detached worker finishes and writes nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(log.read_all().size(), rows.size());
}
