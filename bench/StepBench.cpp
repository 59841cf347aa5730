// Whole training steps at cluster scale, every rank simulated: wall and CPU time, engine events, peak memory.
#include <benchmark/benchmark.h>

#include "BenchSupport.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

namespace {

using namespace moesim;

/**
 * The scenario of `moesim simulate --model MODEL --hw h100 --schedule regular --phase train --ep EP
 * --nodes EP/8 --routing ROUTING --tokens 4096 --seq 4096 --layers LAYERS --per-rank`: one 4K sequence per
 * GPU, every rank simulated (skewed routing makes the ranks differ anyway).
 */
schedules::Scenario step(const std::string& model, int ep, int layers,
                         const std::string& routing = "zipf:1.1") {
  schedules::Scenario s;
  s.model = models::load_model(model);
  s.hw = hw::load_profile("h100");
  s.schedule = "regular";
  s.parallel.ep = ep;
  s.parallel.nodes = (ep + 7) / 8;
  s.workload.phase = schedules::Phase::TRAIN;
  s.workload.tokens = 4096;
  s.workload.seq_len = 4096;
  s.workload.routing = models::parse_routing(routing);
  s.workload.layers = layers;
  s.per_rank = true;
  return s;
}

void run_step(benchmark::State& state, const schedules::Scenario& scenario) {
  std::uint64_t events = 0;
  double peak_mib = 0;
  std::size_t ops = 0;
  for (auto _ : state) {
    bench::reset_peak_rss();
    const schedules::SimulationResult result = schedules::simulate(scenario);
    peak_mib = std::max(peak_mib, bench::peak_rss_mib());
    events += result.run.events;
    ops = result.program->ops().size();
    benchmark::DoNotOptimize(result.step_ms);
  }
  state.counters["gpus"] = scenario.parallel.ep;
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = peak_mib;
}

/** DeepSeek-V3 (61 layers: 3 dense, 58 MoE, 256 experts, top-8), EP over EP/8 nodes of 8 H100s. */
void BM_DeepSeekV3Step(benchmark::State& state) {
  run_step(state, step("deepseek-v3", static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
}
BENCHMARK(BM_DeepSeekV3Step)
    ->ArgNames({"ep", "layers"})
    ->Args({8, 61})
    ->Args({16, 61})
    ->Args({32, 61})
    ->Args({64, 61})
    ->Args({128, 61})
    ->Args({256, 61})
    ->Args({8, 4})  // the CTest smoke run
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

/**
 * BENCHMARKS.md's engine comparison: DeepSeek-V3's training step at EP 64 over 8 nodes of H100s, balanced
 * routing (a symmetric program: rank 0's ops; under --engine simgrid the network moves every rank's
 * data, 4,032 comms per all-to-all), `moesim simulate --model deepseek-v3 --hw h100 --ep 64 --nodes 8
 * --tokens 4096 --seq 4096 --engine analytic|simgrid`, the power governor included (its re-runs too).
 */
void BM_DeepSeekV3Ep64StepPerEngine(benchmark::State& state) {
  schedules::Scenario s = step("deepseek-v3", 64, 61, "balanced");
  s.per_rank = false;
  s.engine = state.range(0) == 0 ? sim::Backend::ANALYTIC : sim::Backend::SIMGRID;
  run_step(state, s);
}
BENCHMARK(BM_DeepSeekV3Ep64StepPerEngine)
    ->ArgName("simgrid")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

/**
 * 1,024 GPUs, one expert each: DeepSeek-V3 has 256 routed experts, so EP 1024 needs a variant with 1,024
 * (bench/deepseek-v3-1024-experts.json: DeepSeek-V3's layers, 1,024 experts, top-8), over 128 nodes.
 * Balanced routing, every rank simulated: the row measures the memory of a 1,024-rank program and run.
 * (With Zipf routing each all-to-all's million flows end one at a time; BENCHMARKS.md says why that is
 * out of reach.)
 */
void BM_Step1024Gpus(benchmark::State& state) {
  run_step(state, step(bench::bench_dir() + "/deepseek-v3-1024-experts.json", 1024,
                       static_cast<int>(state.range(0)), "balanced"));
}
BENCHMARK(BM_Step1024Gpus)
    ->ArgName("layers")
    ->Arg(61)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
