// The 1,000-point sweep, as a user runs it: `moesim sweep bench/sweep-1000.json --jobs 2`, wall time.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "BenchSupport.hpp"

namespace {

/*
 * bench/sweep-1000.json: 5 models x 5 GPUs x 2 schedules (regular, farskip) x EP 1, 2, 4, 8 x 5 routings
 * (balanced, uniform, Zipf 0.8, 1.1, 1.5), training steps of one 4K sequence per GPU. The skewed routings
 * are simulated per rank, the balanced ones on the symmetric fast path.
 */
void BM_Sweep1000Points(benchmark::State& state) {
  const std::string jobs = std::to_string(state.range(0));
  const auto out =
      std::filesystem::temp_directory_path() / ("moesim-bench-sweep-" + std::to_string(getpid()) + ".csv");
  const std::string command = std::string(MOESIM_BINARY) + " sweep " + moesim::bench::bench_dir() +
                              "/sweep-1000.json --jobs " + jobs + " --out " + out.string() +
                              " > /dev/null 2>&1";
  for (auto _ : state) {
    std::filesystem::remove(out);
    if (std::system(command.c_str()) != 0) {
      state.SkipWithError(("failed: " + command).c_str());
      break;
    }
  }
  std::filesystem::remove(out);
  state.counters["points"] = 1000;
}
BENCHMARK(BM_Sweep1000Points)
    ->ArgName("jobs")
    ->Arg(2)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
