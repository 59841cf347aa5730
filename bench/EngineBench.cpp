// Engine throughput on programs built directly (no model, no schedule): events per second of one core.
#include <benchmark/benchmark.h>

#include "moesim/sim/Engine.hpp"

namespace {

using namespace moesim::sim;

/** Nodes of 8 GPUs behind an NVSwitch, one 400G NIC per GPU: H100 HGX figures, round numbers. */
Platform cluster(int nodes) {
  Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = 8;
  topo.gpu_port_Bps = 450e9;
  topo.gpus_per_nic = 1;
  topo.nic_Bps = 48.5e9;
  GpuResources gpu;
  gpu.sm_count = 132;
  gpu.comm_sms = 24;
  auto cost = [](const CollectiveQuery&) { return CollectiveCost{40e9, 2000}; };
  return make_platform(topo, gpu, cost);
}

/*
 * A flow-heavy DAG: every rank runs a chain of `transfers` one-sided puts (each waits for the one before
 * it), to a peer that walks over the world, of 64 KiB to 1.2 MiB, beside a compute stream of kernels the
 * host launches. At any time about one flow per rank is in flight, most of them across nodes, so they
 * meet on the NICs and every completion re-solves a share of the network. Sizes vary so that flows end
 * one at a time.
 */
Program flow_heavy(int world, int transfers) {
  Program program(world, false);
  for (int r = 0; r < world; ++r) {
    program.set_streams(r, {"compute"});
    OpId previous = NO_OP;
    for (int i = 0; i < transfers; ++i) {
      const int peer = (r + 1 + 7 * i) % world;
      const double bytes = 65536.0 * (1 + (r * 13 + i * 7) % 19);
      std::vector<OpId> deps;
      if (previous != NO_OP) deps.push_back(previous);
      previous = program.add_transfer(r, peer, "put", "dispatch", bytes, Transport::SM_KERNEL, 1500, deps);
      if (i % 4 == 0) {
        KernelWork work;
        work.compute_ns = 20000.0 + 1000.0 * ((r + i) % 11);
        work.memory_ns = 8000;
        program.add_kernel(r, 0, "gemm", "routed_experts", work, 4000);
      }
    }
  }
  return program;
}

void BM_FlowHeavyDag(benchmark::State& state) {
  const int world = static_cast<int>(state.range(0));
  const Platform platform = cluster((world + 7) / 8);
  const Program program = flow_heavy(world, static_cast<int>(state.range(1)));
  std::uint64_t events = 0;
  for (auto _ : state) {
    const RunResult result = run(platform, program);
    events += result.events;
    benchmark::DoNotOptimize(result.makespan_ns);
  }
  state.counters["events"] = benchmark::Counter(static_cast<double>(events) / state.iterations());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowHeavyDag)
    ->ArgNames({"gpus", "puts"})
    ->Args({8, 64})
    ->Args({64, 256})
    ->Args({256, 256})
    ->Unit(benchmark::kMillisecond);

}  // namespace
