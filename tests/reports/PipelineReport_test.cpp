// The report's pipeline section: a small 1F1B step whose bubble is known by hand.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "moesim/reports/HtmlReport.hpp"
#include "moesim/schedules/ScenarioFlags.hpp"

using namespace moesim;

namespace {
std::vector<double> bubbles_of(const std::string& html) {
  std::vector<double> out;
  const std::regex row(R"re(data-bubble-pct="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1].str()));
  return out;
}
}  // namespace

// Qwen3-30B-A3B (every layer MoE: uniform stages) on 2 stages of EP4, 4 micro-batches; transfers between
// stages (16 MiB over NVLink) are small next to a chunk: 1F1B keeps each stage busy for
// m = 4 of the m + p - 1 = 5 chunk slots of the step, a bubble of (p - 1)/(m + p - 1) = 20% on both stages.
// Each stage shows m forward and m backward chunks on its timeline.
TEST(PipelineReport, OneFOneBStagesShowTheirChunksAndTheTextbookBubble) {
  schedules::ScenarioFlags f;
  f.model = "qwen3-30b-a3b";
  f.hw = "h100";
  f.ep = 4;
  f.pp = 2;
  f.micro_batches = 4;
  f.layers = 4;
  f.power = "off";
  schedules::Scenario s = schedules::make_scenario(f);
  const auto r = schedules::simulate(s);
  const std::string html = reports::pipeline_html(r);
  const auto bubbles = bubbles_of(html);
  ASSERT_EQ(bubbles.size(), 2u) << "one row per stage";
  for (double b : bubbles) EXPECT_NEAR(b, 20.0, 1.0);
  EXPECT_NE(html.find("stage 1 (rank 4)"), std::string::npos);
  for (const std::string chunk : {"F0 (", "F3 (", "B0 (", "B3 ("})
    EXPECT_NE(html.find(chunk), std::string::npos) << chunk;
  // A layer stack is no step: no section.
  s.parallel.pp = 1;
  s.workload.micro_batches = 1;
  EXPECT_EQ(reports::pipeline_html(schedules::simulate(s)), "");
}
