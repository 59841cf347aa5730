#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moesim/common/Error.hpp"
#include "moesim/sweep/ResultLog.hpp"
#include "moesim/sweep/Runner.hpp"
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
