#include "moesim/calibrate/BenchSuites.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "moesim/common/Error.hpp"

namespace moesim::calibrate {

std::vector<BenchStep> parse_bench_suites(const std::string& text, const std::string& file) {
  std::vector<BenchStep> out;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#')
      continue;
    std::istringstream fields(line);
    BenchStep step;
    std::string gpus;
    fields >> step.suite >> step.step >> step.program >> gpus;
    if (step.program.empty() || (gpus != "1" && gpus != "all"))
      throw ConfigError(file + ":" + std::to_string(number), "", "expected SUITE STEP PROGRAM 1|all ARGS...");
    step.all_gpus = gpus == "all";
    std::getline(fields >> std::ws, step.args);
    out.push_back(std::move(step));
  }
  if (out.empty()) throw ConfigError(file, "", "lists no benchmark suite");
  return out;
}

std::vector<BenchStep> load_bench_suites(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot be read (the benchmark suites table)");
  std::stringstream text;
  text << in.rdbuf();
  return parse_bench_suites(text.str(), path);
}

std::vector<BenchStep> steps_of(const std::vector<BenchStep>& table, const std::vector<std::string>& suites) {
  std::vector<BenchStep> out;
  for (const std::string& name : suites) {
    const auto before = out.size();
    for (const BenchStep& step : table)
      if (step.suite == name) out.push_back(step);
    if (out.size() == before) {
      std::string known;
      for (const BenchStep& step : table)
        if (known.find(" " + step.suite + ",") == std::string::npos) known += " " + step.suite + ",";
      known.pop_back();
      throw ConfigError("", "--suite", "'" + name + "': expected one of" + known);
    }
  }
  return out;
}

}  // namespace moesim::calibrate
