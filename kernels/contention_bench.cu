// contention_bench: how much a GEMM and a communication slow each other down when they run at
// once on the same GPUs — the simulator's compute-slowdown-under-communication factors.
//
// On every GPU: stream A runs --gemm_iters GEMMs (Y = X·Wᵀ, --gemm M,N,K, bf16), stream B runs
// collectives over all GPUs (NCCL all_reduce or all_to_all, --bytes per rank) or a copy-engine
// transfer (cudaMemcpyPeerAsync to the next GPU; a device-to-device copy with one GPU).
//
//   alone  each stream by itself, event-timed per operation
//   both   both streams together: B is sized to span A; only operations that start and end
//          inside the window where both streams are busy are kept (per GPU, on its own events)
//   slow   p50(both) / p50(alone), for the GEMM and for the communication
// NCCL's SM share is varied through ncclConfig_t.maxCTAs (--ctas; 0 = NCCL's default), the
// in-process equivalent of NCCL_MAX_CTAS / NCCL_MAX_NCHANNELS. --comm_priority puts stream B at
// the device's highest stream priority (as frameworks do for their NCCL streams), so its kernels'
// blocks are scheduled ahead of queued GEMM blocks.
#include <algorithm>
#include <cmath>
#include <memory>

#include "BenchRunner.hpp"
#include "LtMatmul.hpp"
#include "moesim/kernels/SizeSweep.hpp"

namespace moesim::kernels {
namespace {

struct GpuState {
  int device = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  std::unique_ptr<LtHandle> handle;
  std::unique_ptr<LtMatmul> gemm;
  DeviceBuffer x, w, y, workspace, send, recv;
};

struct Times {
  std::vector<double> gemm_us, comm_us;
};

class ContentionBench {
 public:
  ContentionBench(BenchSession& session, std::int64_t m, std::int64_t n, std::int64_t k,
                  std::uint64_t max_bytes, bool comm_priority)
      : session_(session), comm_priority_(comm_priority) {
    shape_.m = m;
    shape_.n = n;
    shape_.k = k;
    for (int device : session.devices()) {
      GpuState g;
      g.device = device;
      CUDA_CHECK(cudaSetDevice(device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&g.compute, cudaStreamNonBlocking));
      int least = 0, greatest = 0;
      CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      CUDA_CHECK(
          cudaStreamCreateWithPriority(&g.comm, cudaStreamNonBlocking, comm_priority ? greatest : least));
      g.handle = std::make_unique<LtHandle>();
      g.gemm = std::make_unique<LtMatmul>(*g.handle, shape_);
      g.x = DeviceBuffer(device, static_cast<std::size_t>(shape_.a_elements()) * 2);
      g.w = DeviceBuffer(device, static_cast<std::size_t>(shape_.b_elements()) * 2);
      g.y = DeviceBuffer(device, static_cast<std::size_t>(shape_.y_elements()) * 2);
      g.workspace = DeviceBuffer(device, LtMatmul::kWorkspaceBytes);
      g.send = DeviceBuffer(device, max_bytes);
      g.recv = DeviceBuffer(device, max_bytes);
      const auto seed =
          static_cast<std::uint64_t>(session.options().seed) + static_cast<std::uint64_t>(device);
      fill_random(g.x.get(), DataType::BF16, static_cast<std::size_t>(shape_.a_elements()), seed, 1.0f,
                  g.compute);
      fill_random(g.w.get(), DataType::BF16, static_cast<std::size_t>(shape_.b_elements()), seed + 100, 1.0f,
                  g.compute);
      fill_random(g.send.get(), DataType::FP32, max_bytes / 4, seed + 200, 1.0f, g.compute);
      CUDA_CHECK(cudaStreamSynchronize(g.compute));
      gpus_.push_back(std::move(g));
    }
    const int count = static_cast<int>(gpus_.size());
    for (int r = 0; r < count && count > 1; ++r) {
      CUDA_CHECK(cudaSetDevice(gpus_[r].device));
      const int peer = gpus_[(r + 1) % count].device;
      int can_access = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, gpus_[r].device, peer));
      if (can_access) {
        const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
        if (status != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(status);
        (void)cudaGetLastError();
      }
    }
    std::vector<TextColumn> columns{{"comm", "", 10},     {"size", "B", 10},      {"ctas", "", 4},
                                    {"gemm", "us", 9},    {"gemm+c", "us", 9},    {"slow", "x", 6},
                                    {"comm", "us", 9},    {"comm+g", "us", 9},    {"slow", "x", 6},
                                    {"busbw", "GB/s", 7}, {"busbw+g", "GB/s", 7}, {"kept", "g/c", 7}};
    for (const TextColumn& column : check_columns()) columns.push_back(column);
    session.log().start_table(TextTable(columns));
    session.log().comment(
        "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
        " bf16 on every GPU; times are per operation, p50; slow = p50 together / p50 alone");
  }

  ~ContentionBench() {
    destroy_comms();
    for (GpuState& g : gpus_) {
      (void)cudaStreamDestroy(g.compute);
      (void)cudaStreamDestroy(g.comm);
    }
  }

  /** @brief GEMM alone, once: the denominator of every GEMM slowdown. */
  void measure_gemm_alone() { gemm_alone_ = run_window("", 0, session_.options().iters, 0).gemm_us; }

  void scenario(const std::string& comm, std::uint64_t bytes, std::int64_t ctas) {
    if (comm != "ce_copy") create_comms(ctas);
    const std::int64_t iters = session_.options().iters;
    const Times alone = run_window(comm, bytes, 0, iters);
    const double gemm_p50 = percentile(gemm_alone_, 50);
    const double comm_p50 = percentile(alone.comm_us, 50);
    const auto comm_iters =
        static_cast<std::int64_t>(std::ceil(gemm_p50 * static_cast<double>(iters) / comm_p50)) + 2;
    const Times both = run_window(comm, bytes, iters, std::max<std::int64_t>(comm_iters, 3));
    report(comm, bytes, ctas, alone, both);
  }

 private:
  void create_comms(std::int64_t ctas) {
    if (comms_ready_ && ctas == comm_ctas_) return;
    destroy_comms();
    ncclUniqueId id;
    NCCL_CHECK(ncclGetUniqueId(&id));
    comms_.resize(gpus_.size());
    NCCL_CHECK(ncclGroupStart());
    for (std::size_t r = 0; r < gpus_.size(); ++r) {
      CUDA_CHECK(cudaSetDevice(gpus_[r].device));
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      if (ctas > 0) {
        config.minCTAs = 1;
        config.maxCTAs = static_cast<int>(ctas);
      }
      NCCL_CHECK(ncclCommInitRankConfig(&comms_[r], static_cast<int>(gpus_.size()), id, static_cast<int>(r),
                                        &config));
    }
    NCCL_CHECK(ncclGroupEnd());
    comms_ready_ = true;
    comm_ctas_ = ctas;
  }

  void destroy_comms() {
    for (ncclComm_t comm : comms_) (void)ncclCommDestroy(comm);
    comms_.clear();
    comms_ready_ = false;
  }

  void enqueue_comm(const std::string& comm, std::uint64_t bytes) {
    const int n = static_cast<int>(gpus_.size());
    if (comm == "ce_copy") {
      for (int r = 0; r < n; ++r) {
        const GpuState& to = gpus_[(r + 1) % n];
        CUDA_CHECK(cudaMemcpyPeerAsync(to.recv.get(), to.device, gpus_[r].send.get(), gpus_[r].device, bytes,
                                       gpus_[r].comm));
      }
      return;
    }
    const std::size_t count = bytes / 4;
    const std::size_t chunk = count / static_cast<std::size_t>(n);
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      const GpuState& g = gpus_[r];
      if (comm == "all_reduce") {
        NCCL_CHECK(ncclAllReduce(g.send.get(), g.recv.get(), count, ncclFloat, ncclSum, comms_[r], g.comm));
      } else {
        for (int peer = 0; peer < n; ++peer) {
          NCCL_CHECK(ncclSend(g.send.as<float>() + peer * chunk, chunk, ncclFloat, peer, comms_[r], g.comm));
          NCCL_CHECK(ncclRecv(g.recv.as<float>() + peer * chunk, chunk, ncclFloat, peer, comms_[r], g.comm));
        }
      }
    }
    NCCL_CHECK(ncclGroupEnd());
  }

  // Runs gemm_iters GEMMs and comm_iters communications (either may be 0) from a common start
  // per GPU; keeps the operations inside the window where every running stream is busy.
  Times run_window(const std::string& comm, std::uint64_t bytes, std::int64_t gemm_iters,
                   std::int64_t comm_iters) {
    const std::int64_t warmup = session_.options().warmup_iters;
    for (std::int64_t i = 0; i < warmup; ++i) {
      for (GpuState& g : gpus_) {
        CUDA_CHECK(cudaSetDevice(g.device));
        if (gemm_iters > 0) g.gemm->run(g.x.get(), g.w.get(), g.y.get(), g.workspace.get(), g.compute);
      }
      if (comm_iters > 0) enqueue_comm(comm, bytes);
    }
    std::vector<std::unique_ptr<EventTimeline>> gemm_events, comm_events;
    std::vector<cudaEvent_t> bases;
    for (GpuState& g : gpus_) {
      CUDA_CHECK(cudaSetDevice(g.device));
      CUDA_CHECK(cudaStreamSynchronize(g.compute));
      CUDA_CHECK(cudaStreamSynchronize(g.comm));
      gemm_events.push_back(std::make_unique<EventTimeline>(g.device, static_cast<std::size_t>(gemm_iters)));
      comm_events.push_back(std::make_unique<EventTimeline>(g.device, static_cast<std::size_t>(comm_iters)));
      cudaEvent_t base = nullptr;
      CUDA_CHECK(cudaEventCreate(&base));
      CUDA_CHECK(cudaEventRecord(base, g.compute));
      CUDA_CHECK(cudaStreamWaitEvent(g.comm, base, 0));
      gemm_events.back()->record_base(g.compute);
      comm_events.back()->record_base(g.compute);
      bases.push_back(base);
    }
    const std::int64_t steps = std::max(gemm_iters, comm_iters);
    for (std::int64_t i = 0; i < steps; ++i) {
      for (std::size_t r = 0; r < gpus_.size(); ++r) {
        GpuState& g = gpus_[r];
        CUDA_CHECK(cudaSetDevice(g.device));
        if (i < gemm_iters) {
          gemm_events[r]->record_start(static_cast<std::size_t>(i), g.compute);
          g.gemm->run(g.x.get(), g.w.get(), g.y.get(), g.workspace.get(), g.compute);
          gemm_events[r]->record_end(static_cast<std::size_t>(i), g.compute);
        }
        if (i < comm_iters) comm_events[r]->record_start(static_cast<std::size_t>(i), g.comm);
      }
      if (i < comm_iters) enqueue_comm(comm, bytes);
      for (std::size_t r = 0; r < gpus_.size() && i < comm_iters; ++r) {
        comm_events[r]->record_end(static_cast<std::size_t>(i), gpus_[r].comm);
      }
    }
    Times times;
    for (std::size_t r = 0; r < gpus_.size(); ++r) {
      CUDA_CHECK(cudaSetDevice(gpus_[r].device));
      CUDA_CHECK(cudaStreamSynchronize(gpus_[r].compute));
      CUDA_CHECK(cudaStreamSynchronize(gpus_[r].comm));
      double lo = 0, hi = 1e30;
      if (gemm_iters > 0 && comm_iters > 0) {
        lo = std::max(gemm_events[r]->start_ms(0), comm_events[r]->start_ms(0));
        hi = std::min(gemm_events[r]->end_ms(static_cast<std::size_t>(gemm_iters - 1)),
                      comm_events[r]->end_ms(static_cast<std::size_t>(comm_iters - 1)));
      }
      for (std::int64_t i = 0; i < gemm_iters; ++i) {
        const auto at = static_cast<std::size_t>(i);
        if (gemm_events[r]->start_ms(at) >= lo && gemm_events[r]->end_ms(at) <= hi) {
          times.gemm_us.push_back(gemm_events[r]->elapsed_ms(at) * 1e3);
        }
      }
      for (std::int64_t i = 0; i < comm_iters; ++i) {
        const auto at = static_cast<std::size_t>(i);
        if (comm_events[r]->start_ms(at) >= lo && comm_events[r]->end_ms(at) <= hi) {
          times.comm_us.push_back(comm_events[r]->elapsed_ms(at) * 1e3);
        }
      }
      CUDA_CHECK(cudaEventDestroy(bases[r]));
    }
    return times;
  }

  void report(const std::string& comm, std::uint64_t bytes, std::int64_t ctas, const Times& alone,
              const Times& both) {
    const double n = static_cast<double>(gpus_.size());
    const double bus_factor =
        comm == "all_reduce" ? 2 * (n - 1) / n : (comm == "all_to_all" ? (n - 1) / n : 1.0);
    auto p50 = [](const std::vector<double>& v) { return v.empty() ? NAN : percentile(v, 50); };
    const double gemm_alone = p50(gemm_alone_), gemm_both = p50(both.gemm_us);
    const double comm_alone = p50(alone.comm_us), comm_both = p50(both.comm_us);
    const double bus_alone = gigabytes_per_second(static_cast<double>(bytes), comm_alone * 1e-6) * bus_factor;
    const double bus_both = gigabytes_per_second(static_cast<double>(bytes), comm_both * 1e-6) * bus_factor;
    const GpuState& g = gpus_.front();
    CUDA_CHECK(cudaSetDevice(g.device));
    const ErrorTally tally = verify_matmul_samples(shape_, g.x.get(), g.w.get(), g.y.get(), 128,
                                                   static_cast<std::uint64_t>(bytes + ctas), 1e-2, g.compute);
    session_.record_verification(tally);
    const std::string ctas_text = comm == "ce_copy" ? "CE" : (ctas == 0 ? "def" : std::to_string(ctas));
    std::vector<std::string> cells{
        comm,
        format_bytes(bytes),
        ctas_text,
        format_fixed(gemm_alone, 1),
        format_fixed(gemm_both, 1),
        format_fixed(gemm_both / gemm_alone, 3),
        format_fixed(comm_alone, 1),
        format_fixed(comm_both, 1),
        format_fixed(comm_both / comm_alone, 3),
        format_fixed(bus_alone, 1),
        format_fixed(bus_both, 1),
        std::to_string(both.gemm_us.size()) + "/" + std::to_string(both.comm_us.size())};
    for (const std::string& cell : check_cells(tally, true)) cells.push_back(cell);
    JsonValue record = JsonValue::object();
    record.set("comm", comm);
    record.set("bytes", static_cast<unsigned long long>(bytes));
    record.set("nccl_max_ctas", comm == "ce_copy" ? JsonValue() : JsonValue(static_cast<long long>(ctas)));
    record.set("ranks", static_cast<long long>(gpus_.size()));
    record.set("comm_stream_priority", comm_priority_ ? "highest" : "default");
    record.set("gemm_m", static_cast<long long>(shape_.m));
    record.set("gemm_n", static_cast<long long>(shape_.n));
    record.set("gemm_k", static_cast<long long>(shape_.k));
    record.set("gemm_alone_us", time_json(summarize(gemm_alone_)));
    if (!both.gemm_us.empty()) record.set("gemm_with_comm_us", time_json(summarize(both.gemm_us)));
    record.set("gemm_slowdown", gemm_both / gemm_alone);
    record.set("comm_alone_us", time_json(summarize(alone.comm_us)));
    if (!both.comm_us.empty()) record.set("comm_with_gemm_us", time_json(summarize(both.comm_us)));
    record.set("comm_slowdown", comm_both / comm_alone);
    record.set("busbw_alone_GBps", bus_alone);
    record.set("busbw_with_gemm_GBps", bus_both);
    record.set("check", check_json(tally, true));
    session_.log().add_row(cells, record);
  }

  BenchSession& session_;
  bool comm_priority_;
  MatmulShape shape_;
  std::vector<GpuState> gpus_;
  std::vector<ncclComm_t> comms_;
  bool comms_ready_ = false;
  std::int64_t comm_ctas_ = -1;
  std::vector<double> gemm_alone_;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("contention",
                       "GEMM slowdown under concurrent NCCL / copy-engine traffic and vice versa");
  std::vector<std::int64_t> gemm{16384, 4096, 7168};
  std::vector<std::int64_t> sizes_mib{64, 512};
  std::vector<std::int64_t> ctas{0, 8, 2};
  std::string comms = "all_reduce,all_to_all,ce_copy";
  bool comm_priority = false;
  ArgParser& parser = session.parser();
  parser.add_flag("comm_priority", 0, &comm_priority, "communication stream at the highest priority");
  parser.add_int_list("gemm", 0, &gemm, "GEMM M,N,K (default: DeepSeek-V3 expert up-projection, 16K tokens)");
  parser.add_int_list("sizes_mib", 0, &sizes_mib, "communication bytes per rank, MiB");
  parser.add_int_list("ctas", 0, &ctas, "NCCL maxCTAs values (0: NCCL default)");
  parser.add_string("comms", 0, &comms, "all_reduce,all_to_all,ce_copy");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    if (gemm.size() != 3) throw ArgError("--gemm needs M,N,K");
    s.open({{"cuBLASLt", blaslt_version()}, {"NCCL", nccl_version_text()}});
    const std::uint64_t max_bytes =
        static_cast<std::uint64_t>(*std::max_element(sizes_mib.begin(), sizes_mib.end())) << 20;
    ContentionBench bench(s, gemm[0], gemm[1], gemm[2], max_bytes, comm_priority);
    bench.measure_gemm_alone();
    for (const std::string comm : {"all_reduce", "all_to_all", "ce_copy"}) {
      if (comms.find(comm) == std::string::npos) continue;
      if (comm != "ce_copy" && s.devices().size() < 2) {
        s.log().comment(comm + " needs -g 2 or more: skipped");
        continue;
      }
      for (std::int64_t mib : sizes_mib) {
        const auto bytes = static_cast<std::uint64_t>(mib) << 20;
        if (comm == "ce_copy") {
          bench.scenario(comm, bytes, 0);
          continue;
        }
        for (std::int64_t c : ctas) bench.scenario(comm, bytes, c);
      }
    }
  });
}
