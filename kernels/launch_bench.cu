// launch_bench: what a kernel launch costs, the numbers the simulator's host-launch model uses.
//
//   launch_host        host time of one <<<>>> launch of an empty kernel (the CPU cost per launch),
//                      averaged over --batch launches issued back to back
//   launch_device      device time per empty kernel when the GPU never waits for the host: the
//                      batch queues up behind a spin kernel, then is event-timed (GPU-side
//                      kernel-to-kernel throughput)
//   launch_roundtrip   host time of launch + cudaStreamSynchronize (latency to a finished kernel)
//   graph_device_N     device time of one replay of a graph of N empty kernel nodes, per node
//                      (replays queued behind a spin kernel, as for launch_device)
//   graph_host_N       host time of cudaGraphLaunch of that graph, per node
//   copy_launch_host   host time of one copy of a copy-engine all-to-all as layer_runner issues it
//                      (stream waits on the fork event, cudaMemcpyPeerAsync of 4 KiB, event record
//                      on the copy stream, the comm stream waits on it), per copy
//   eager_device_<seq> device time per kernel of a sequence of real layer kernels launched one by
//                      one behind a spin kernel (so the GPU never waits for the host)
//   graph_device_<seq> the same sequence captured once and replayed as a graph, per kernel
//   eager_host_<seq>   host time to enqueue the sequence eagerly, per kernel
// The sequences are those of layer_runner at Qwen3-30B-A3B shapes (2048 tokens, hidden 2048, 32
// local experts of 512 rows, expert FFN 768): rmsnorm, swiglu, and (with cuBLASLt) an expert GEMM
// with a different weight matrix per launch and the full expert chain up GEMM, SwiGLU, down GEMM.
// The benchmarks that calibrate kernel efficiency time sub-50 us cases as graph replays, so eager
// minus graph is what an eagerly launched kernel costs on the device beyond its table time.
// Host timings use std::chrono around a batch of operations, never around a single one.
#include <chrono>
#include <functional>
#include <memory>

#include "BenchRunner.hpp"
#include "DeviceBuffer.hpp"
#include "DeviceFill.hpp"
#include "LayerKernels.hpp"
#include "OperandSets.hpp"
#ifdef MOESIM_LAUNCH_BENCH_BLAS
#include "LtMatmul.hpp"
#endif

namespace moesim::kernels {
namespace {

__global__ void empty_kernel() {}

double host_us_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

constexpr double kHoldPerLaunchUs = 20;  // spin time per queued launch: above the host's cost of one

class LaunchBench {
 public:
  LaunchBench(BenchSession& session, int device, std::int64_t batch)
      : session_(session), device_(device), batch_(batch) {
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    std::vector<TextColumn> columns{{"measure", "", 18}, {"ops", "", 6}};
    for (const TextColumn& column : time_columns()) columns.push_back(column);
    columns.push_back({"rate", "Mop/s", 8});
    session.log().start_table(TextTable(columns));
    session.log().comment("time columns are per operation (one launch or one graph node)");
  }
  ~LaunchBench() { (void)cudaStreamDestroy(stream_); }

  void run_all(const std::vector<std::int64_t>& graph_nodes) {
    const auto iters = static_cast<std::size_t>(session_.options().iters);
    const std::int64_t warmup = session_.options().warmup_iters;
    for (std::int64_t i = 0; i < warmup; ++i) launch_batch();
    CUDA_CHECK(cudaStreamSynchronize(stream_));

    std::vector<double> host(iters), roundtrip(iters);
    for (std::size_t i = 0; i < iters; ++i) {
      const auto start = std::chrono::steady_clock::now();
      launch_batch();
      host[i] = host_us_since(start) / static_cast<double>(batch_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    // 20 us per queued launch covers the host's rate.
    const std::vector<double> device = time_held([&] { launch_batch(); }, batch_, kHoldPerLaunchUs).device;
    const std::int64_t roundtrips = std::max<std::int64_t>(1, batch_ / 10);
    for (std::size_t i = 0; i < iters; ++i) {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t k = 0; k < roundtrips; ++k) {
        empty_kernel<<<1, 1, 0, stream_>>>();
        CUDA_CHECK(cudaStreamSynchronize(stream_));
      }
      roundtrip[i] = host_us_since(start) / static_cast<double>(roundtrips);
    }
    CUDA_CHECK_LAUNCH();
    const std::vector<double> copy_host = time_copy_launches();
    add_row("launch_host", batch_, host);
    add_row("launch_device", batch_, device);
    add_row("launch_roundtrip", roundtrips, roundtrip);
    add_row("copy_launch_host", copies_per_sample(), copy_host);
    for (std::int64_t nodes : graph_nodes) run_graph(nodes);
    run_layer_sequences();
  }

 private:
  std::int64_t copies_per_sample() const { return std::max<std::int64_t>(1, batch_ / 10); }

  // Copies to the same device: the host-side calls are those of a peer copy (the driver queues the
  // work on a copy engine either way), and the bench needs one GPU only.
  std::vector<double> time_copy_launches() {
    constexpr std::size_t kBytes = 4096;
    DeviceBuffer source(device_, kBytes), destination(device_, kBytes);
    cudaStream_t copy = nullptr;
    cudaEvent_t fork = nullptr, done = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    const auto copies = copies_per_sample();
    auto issue = [&] {
      CUDA_CHECK(cudaEventRecord(fork, stream_));
      for (std::int64_t k = 0; k < copies; ++k) {
        CUDA_CHECK(cudaStreamWaitEvent(copy, fork, 0));
        CUDA_CHECK(cudaMemcpyPeerAsync(destination.get(), device_, source.get(), device_, kBytes, copy));
        CUDA_CHECK(cudaEventRecord(done, copy));
        CUDA_CHECK(cudaStreamWaitEvent(stream_, done, 0));
      }
    };
    for (std::int64_t i = 0; i < session_.options().warmup_iters; ++i) issue();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> host(static_cast<std::size_t>(session_.options().iters));
    for (double& sample : host) {
      const auto start = std::chrono::steady_clock::now();
      issue();
      sample = host_us_since(start) / static_cast<double>(copies);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    CUDA_CHECK(cudaEventDestroy(fork));
    CUDA_CHECK(cudaEventDestroy(done));
    CUDA_CHECK(cudaStreamDestroy(copy));
    return host;
  }

  void launch_batch() {
    for (std::int64_t k = 0; k < batch_; ++k) empty_kernel<<<1, 1, 0, stream_>>>();
  }

  void run_graph(std::int64_t nodes) {
    const CapturedGraph graph(stream_, [&](cudaStream_t s) {
      for (std::int64_t k = 0; k < nodes; ++k) empty_kernel<<<1, 1, 0, s>>>();
    });
    // Enough replays per sample that the sample spans at least ~1000 nodes.
    const std::int64_t replays = std::max<std::int64_t>(1, 1000 / nodes);
    for (std::int64_t i = 0; i < session_.options().warmup_iters; ++i) graph.launch(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const HeldTimes t = time_held(
        [&] {
          for (std::int64_t r = 0; r < replays; ++r) graph.launch(stream_);
        },
        replays * nodes, kHoldPerLaunchUs / static_cast<double>(nodes));
    add_row("graph_device_" + std::to_string(nodes), nodes, t.device);
    add_row("graph_host_" + std::to_string(nodes), nodes, t.host);
  }

  /** @brief Enqueues `kernels` kernels on the stream; the same calls every time. */
  struct Sequence {
    std::string name;
    std::int64_t kernels;
    std::function<void(cudaStream_t)> issue;
  };

  void run_layer_sequences() {
    constexpr std::int64_t kTokens = 2048, kHidden = 2048, kExperts = 32, kRows = 512, kFfn = 768;
    DeviceBuffer x(device_, kTokens * kHidden * 2), y(device_, kTokens * kHidden * 2),
        gamma(device_, kHidden * 2), up(device_, kRows * 2 * kFfn * 2), act(device_, kRows * kFfn * 2);
    fill_random(x.get(), DataType::BF16, kTokens * kHidden, 1, 1.0f, stream_);
    fill_random(gamma.get(), DataType::BF16, kHidden, 2, 1.0f, stream_);
    fill_random(up.get(), DataType::BF16, kRows * 2 * kFfn, 3, 1.0f, stream_);
    std::vector<Sequence> sequences;
    sequences.push_back({"rmsnorm", kExperts, [&](cudaStream_t s) {
                           for (std::int64_t e = 0; e < kExperts; ++e)
                             launch_rmsnorm(x.as<bf16_t>(), nullptr, nullptr, gamma.as<bf16_t>(),
                                            y.as<bf16_t>(), kTokens, kHidden, 1e-6f, s);
                         }});
    sequences.push_back({"swiglu", kExperts, [&](cudaStream_t s) {
                           for (std::int64_t e = 0; e < kExperts; ++e)
                             launch_swiglu(up.as<bf16_t>(), act.as<bf16_t>(), kRows, kFfn, s);
                         }});
#ifdef MOESIM_LAUNCH_BENCH_BLAS
    // The experts' weights, one matrix each, so every GEMM reads its weights from HBM as in a layer.
    const LtHandle handle;
    MatmulShape up_shape, down_shape;
    up_shape.m = down_shape.m = kRows;
    up_shape.n = 2 * kFfn;
    up_shape.k = down_shape.n = kHidden;
    down_shape.k = kFfn;
    const LtMatmul up_gemm(handle, up_shape), down_gemm(handle, down_shape);
    DeviceBuffer workspace(device_, LtMatmul::kWorkspaceBytes), out(device_, kRows * kHidden * 2);
    const auto w_up =
        random_buffers(device_, kExperts, 2 * kFfn * kHidden, DataType::BF16, 10, 0.05f, stream_);
    const auto w_down = random_buffers(device_, kExperts, kHidden * kFfn, DataType::BF16, 60, 0.05f, stream_);
    sequences.push_back({"gemm", kExperts, [&](cudaStream_t s) {
                           for (std::int64_t e = 0; e < kExperts; ++e)
                             up_gemm.run(x.get(), w_up[static_cast<std::size_t>(e)].get(), up.get(),
                                         workspace.get(), s);
                         }});
    sequences.push_back({"expert_chain", 3 * kExperts, [&](cudaStream_t s) {
                           for (std::int64_t e = 0; e < kExperts; ++e) {
                             const auto i = static_cast<std::size_t>(e);
                             up_gemm.run(x.get(), w_up[i].get(), up.get(), workspace.get(), s);
                             launch_swiglu(up.as<bf16_t>(), act.as<bf16_t>(), kRows, kFfn, s);
                             down_gemm.run(act.get(), w_down[i].get(), out.get(), workspace.get(), s);
                           }
                         }});
#endif
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (const Sequence& sequence : sequences) run_sequence(sequence);
  }

  // Eager and graph device time per kernel of one sequence, both queued behind a spin kernel.
  void run_sequence(const Sequence& sequence) {
    for (std::int64_t i = 0; i < session_.options().warmup_iters; ++i) sequence.issue(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const HeldTimes eager = time_held([&] { sequence.issue(stream_); }, sequence.kernels, 25);
    const CapturedGraph graph(stream_, sequence.issue);
    graph.launch(stream_);  // uploads the graph
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const HeldTimes replay = time_held([&] { graph.launch(stream_); }, sequence.kernels,
                                       50.0 / static_cast<double>(sequence.kernels));
    add_row("eager_device_" + sequence.name, sequence.kernels, eager.device);
    add_row("graph_device_" + sequence.name, sequence.kernels, replay.device);
    add_row("eager_host_" + sequence.name, sequence.kernels, eager.host);
  }

  /** @brief Per-operation host and device time of `issue`, queued behind a spin kernel each sample. */
  struct HeldTimes {
    std::vector<double> host, device;
  };

  // The spin kernel lasts hold_per_op_us for each of the `ops` operations, so the host has queued them all
  // before the GPU starts: device time is then the GPU's own rate, host time the cost to enqueue.
  HeldTimes time_held(const std::function<void()>& issue, std::int64_t ops, double hold_per_op_us) {
    const auto iters = static_cast<std::size_t>(session_.options().iters);
    const auto count = static_cast<double>(ops);
    HeldTimes t{std::vector<double>(iters), std::vector<double>(iters)};
    EventTimeline timeline(device_, iters);
    for (std::size_t i = 0; i < iters; ++i) {
      hold_stream(stream_, hold_per_op_us * count);
      timeline.record_start(i, stream_);
      const auto start = std::chrono::steady_clock::now();
      issue();
      t.host[i] = host_us_since(start) / count;
      timeline.record_end(i, stream_);
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      t.device[i] = timeline.elapsed_ms(i) * 1e3 / count;
    }
    return t;
  }

  /** @brief What `issue` enqueues, captured once as a graph; launch() replays it. */
  class CapturedGraph {
   public:
    CapturedGraph(cudaStream_t stream, const std::function<void(cudaStream_t)>& issue) {
      CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      issue(stream);
      CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
      CUDA_CHECK(instantiate_graph(&exec_, graph_));
    }
    ~CapturedGraph() {
      (void)cudaGraphExecDestroy(exec_);
      (void)cudaGraphDestroy(graph_);
    }
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;
    void launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

   private:
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
  };

  void add_row(const std::string& measure, std::int64_t ops, const std::vector<double>& samples_us) {
    const SampleStats stats = summarize(samples_us);
    std::vector<std::string> cells{measure, std::to_string(ops)};
    for (const std::string& cell : time_cells(stats)) cells.push_back(cell);
    const double rate = stats.p50 > 0 ? 1.0 / stats.p50 : 0.0;
    cells.push_back(format_fixed(rate, 3));
    Json record = Json::object();
    record["measure"] = measure;
    record["ops_per_sample"] = static_cast<long long>(ops);
    record["time_us"] = time_json(stats);
    record["rate_Mops"] = rate;
    session_.log().add_row(cells, record);
  }

  BenchSession& session_;
  int device_;
  std::int64_t batch_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("launch", "empty-kernel launch overhead and CUDA graph replay cost per node");
  std::int64_t batch = 1000;
  std::vector<std::int64_t> graph_nodes{1, 10, 100, 1000};
  session.parser().add_int("batch", 0, &batch, "launches per timed sample", 1);
  session.parser().add_int_list("graph_nodes", 0, &graph_nodes, "kernel nodes per graph");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({});
    s.log().comment("no outputs to verify: the correctness columns are omitted");
    LaunchBench bench(s, s.devices().front(), batch);
    bench.run_all(graph_nodes);
  });
}
