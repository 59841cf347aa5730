// contention_bench: how much compute and communication slow each other down when they run at
// once on the same GPUs — the simulator's contention factors.
//
// On every GPU: stream A runs a compute kernel back to back (--compute, each in turn):
//   gemm     Y = X·Wᵀ, --gemm M,N,K, bf16 (SM-bound: what the comm kernel's SMs cost)
//   add      y = a + b over --mem_mib MiB operands, bf16 (HBM-bound: what the comm traffic costs)
//   softmax  the layer runner's causal softmax over fp32 scores of --mem_mib MiB, 4096 keys per row
//   rmsnorm  the layer runner's RMSNorm over --mem_mib MiB of rows of --norm_width (+ --norm_inputs)
//   topk     the layer runner's router top-k over --mem_mib MiB of logits (--experts, --top_k)
// and stream B runs collectives over all GPUs (NCCL all_reduce or all_to_all of --sizes_mib per rank)
// or a copy-engine transfer (cudaMemcpyPeerAsync to the next GPU; a device-to-device copy with one GPU).
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
#include <optional>

#include "BenchRunner.hpp"
#include "LayerKernelCase.hpp"
#include "LayerKernels.hpp"
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
  DeviceBuffer mem_in, mem_out;  // a layer kernel's inputs and outputs (LayerKernelCase)
};

struct Times {
  std::vector<double> compute_us, comm_us;
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
    std::vector<TextColumn> columns{{"compute", "", 7}, {"comm", "", 10},     {"size", "B", 10},
                                    {"ctas", "", 4},    {"kernel", "us", 9},  {"kernel+c", "us", 9},
                                    {"slow", "x", 6},   {"comm", "us", 9},    {"comm+k", "us", 9},
                                    {"slow", "x", 6},   {"busbw", "GB/s", 7}, {"busbw+k", "GB/s", 7},
                                    {"hbm", "GB/s", 7}, {"kept", "k/c", 7}};
    for (const TextColumn& column : check_columns()) columns.push_back(column);
    session.log().start_table(TextTable(columns));
    session.log().comment("gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                          " bf16; layer kernels as their shape column says; times are per operation, p50; "
                          "slow = p50 together / p50 alone; "
                          "hbm = the compute kernel's HBM bytes per second alone (add, softmax)");
  }

  ~ContentionBench() {
    destroy_comms();
    for (GpuState& g : gpus_) {
      (void)cudaStreamDestroy(g.compute);
      (void)cudaStreamDestroy(g.comm);
    }
  }

  /** @brief The compute kernel alone, once per kind: the denominator of every compute slowdown. */
  void measure_compute_alone(std::optional<LayerKernelCase> layer_kernel) {
    layer_ = layer_kernel;
    for (GpuState& g : gpus_) {
      CUDA_CHECK(cudaSetDevice(g.device));
      const auto seed = static_cast<std::uint64_t>(session_.options().seed) + 300;
      if (layer_) {
        g.mem_in = DeviceBuffer(g.device, layer_->input_bytes());
        g.mem_out = DeviceBuffer(g.device, layer_->output_bytes());
        layer_->fill(g.mem_in, g.mem_out, seed, g.compute);
      }
      CUDA_CHECK(cudaStreamSynchronize(g.compute));
    }
    compute_alone_ = run_window("", 0, session_.options().iters, 0).compute_us;
  }

  void scenario(const std::string& comm, std::uint64_t bytes, std::int64_t ctas) {
    if (comm != "ce_copy") create_comms(ctas);
    const std::int64_t iters = session_.options().iters;
    const Times alone = run_window(comm, bytes, 0, iters);
    const double compute_p50 = percentile(compute_alone_, 50);
    const double comm_p50 = percentile(alone.comm_us, 50);
    // Short memory kernels run as many times as it takes to span `iters` collectives.
    const auto compute_iters = std::max(
        iters, static_cast<std::int64_t>(std::ceil(comm_p50 * static_cast<double>(iters) / compute_p50)));
    const auto comm_iters =
        static_cast<std::int64_t>(std::ceil(compute_p50 * static_cast<double>(compute_iters) / comm_p50)) + 2;
    const Times both = run_window(comm, bytes, compute_iters, std::max<std::int64_t>(comm_iters, 3));
    report(comm, bytes, ctas, alone, both);
  }

 private:
  /** @brief HBM bytes one compute kernel moves (0 for the GEMM, which is not HBM-bound). */
  double compute_hbm_bytes() const { return layer_ ? layer_->hbm_bytes() : 0; }

  void run_compute(GpuState& g) {
    if (layer_) {
      layer_->launch(g.mem_in, g.mem_out, g.compute);
      return;
    }
    g.gemm->run(g.x.get(), g.w.get(), g.y.get(), g.workspace.get(), g.compute);
  }

  // Checks the last compute kernel's output on the first GPU: sampled GEMM outputs, sampled rows of a layer
  // kernel against the host.
  ErrorTally verify_compute(std::uint64_t salt) {
    const GpuState& g = gpus_.front();
    CUDA_CHECK(cudaSetDevice(g.device));
    CUDA_CHECK(cudaStreamSynchronize(g.compute));
    if (layer_) return layer_->check(g.mem_in, g.mem_out, g.compute);
    return verify_matmul_samples(shape_, g.x.get(), g.w.get(), g.y.get(), 128, salt, 1e-2, g.compute);
  }

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

  // Runs compute_iters compute kernels and comm_iters communications (either may be 0) from a common
  // start per GPU; keeps the operations inside the window where every running stream is busy.
  Times run_window(const std::string& comm, std::uint64_t bytes, std::int64_t compute_iters,
                   std::int64_t comm_iters) {
    const std::int64_t warmup = session_.options().warmup_iters;
    for (std::int64_t i = 0; i < warmup; ++i) {
      for (GpuState& g : gpus_) {
        CUDA_CHECK(cudaSetDevice(g.device));
        if (compute_iters > 0) run_compute(g);
      }
      if (comm_iters > 0) enqueue_comm(comm, bytes);
    }
    std::vector<std::unique_ptr<EventTimeline>> compute_events, comm_events;
    std::vector<cudaEvent_t> bases;
    for (GpuState& g : gpus_) {
      CUDA_CHECK(cudaSetDevice(g.device));
      CUDA_CHECK(cudaStreamSynchronize(g.compute));
      CUDA_CHECK(cudaStreamSynchronize(g.comm));
      compute_events.push_back(
          std::make_unique<EventTimeline>(g.device, static_cast<std::size_t>(compute_iters)));
      comm_events.push_back(std::make_unique<EventTimeline>(g.device, static_cast<std::size_t>(comm_iters)));
      cudaEvent_t base = nullptr;
      CUDA_CHECK(cudaEventCreate(&base));
      CUDA_CHECK(cudaEventRecord(base, g.compute));
      CUDA_CHECK(cudaStreamWaitEvent(g.comm, base, 0));
      compute_events.back()->record_base(g.compute);
      comm_events.back()->record_base(g.compute);
      bases.push_back(base);
    }
    // Interleaves the enqueues in proportion, so neither stream starts with a long head start.
    const std::int64_t steps = std::max(compute_iters, comm_iters);
    std::int64_t computes_done = 0, comms_done = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
      const std::int64_t computes_due = compute_iters * (i + 1) / steps;
      const std::int64_t comms_due = comm_iters * (i + 1) / steps;
      for (; computes_done < computes_due; ++computes_done) {
        for (std::size_t r = 0; r < gpus_.size(); ++r) {
          GpuState& g = gpus_[r];
          CUDA_CHECK(cudaSetDevice(g.device));
          compute_events[r]->record_start(static_cast<std::size_t>(computes_done), g.compute);
          run_compute(g);
          compute_events[r]->record_end(static_cast<std::size_t>(computes_done), g.compute);
        }
      }
      for (; comms_done < comms_due; ++comms_done) {
        for (std::size_t r = 0; r < gpus_.size(); ++r) {
          CUDA_CHECK(cudaSetDevice(gpus_[r].device));
          comm_events[r]->record_start(static_cast<std::size_t>(comms_done), gpus_[r].comm);
        }
        enqueue_comm(comm, bytes);
        for (std::size_t r = 0; r < gpus_.size(); ++r) {
          comm_events[r]->record_end(static_cast<std::size_t>(comms_done), gpus_[r].comm);
        }
      }
    }
    Times times;
    for (std::size_t r = 0; r < gpus_.size(); ++r) {
      CUDA_CHECK(cudaSetDevice(gpus_[r].device));
      CUDA_CHECK(cudaStreamSynchronize(gpus_[r].compute));
      CUDA_CHECK(cudaStreamSynchronize(gpus_[r].comm));
      double lo = 0, hi = 1e30;
      if (compute_iters > 0 && comm_iters > 0) {
        lo = std::max(compute_events[r]->start_ms(0), comm_events[r]->start_ms(0));
        hi = std::min(compute_events[r]->end_ms(static_cast<std::size_t>(compute_iters - 1)),
                      comm_events[r]->end_ms(static_cast<std::size_t>(comm_iters - 1)));
      }
      keep_inside(*compute_events[r], compute_iters, lo, hi, times.compute_us);
      keep_inside(*comm_events[r], comm_iters, lo, hi, times.comm_us);
      CUDA_CHECK(cudaEventDestroy(bases[r]));
    }
    return times;
  }

  static void keep_inside(const EventTimeline& events, std::int64_t count, double lo, double hi,
                          std::vector<double>& out) {
    for (std::int64_t i = 0; i < count; ++i) {
      const auto at = static_cast<std::size_t>(i);
      if (events.start_ms(at) >= lo && events.end_ms(at) <= hi) out.push_back(events.elapsed_ms(at) * 1e3);
    }
  }

  void report(const std::string& comm, std::uint64_t bytes, std::int64_t ctas, const Times& alone,
              const Times& both) {
    const double n = static_cast<double>(gpus_.size());
    const double bus_factor =
        comm == "all_reduce" ? 2 * (n - 1) / n : (comm == "all_to_all" ? (n - 1) / n : 1.0);
    auto p50 = [](const std::vector<double>& v) { return v.empty() ? NAN : percentile(v, 50); };
    const double compute_alone = p50(compute_alone_), compute_both = p50(both.compute_us);
    const double comm_alone = p50(alone.comm_us), comm_both = p50(both.comm_us);
    const double bus_alone = gigabytes_per_second(static_cast<double>(bytes), comm_alone * 1e-6) * bus_factor;
    const double bus_both = gigabytes_per_second(static_cast<double>(bytes), comm_both * 1e-6) * bus_factor;
    const double hbm_GBps = gigabytes_per_second(compute_hbm_bytes(), compute_alone * 1e-6);
    const bool gemm = !layer_;
    const std::string name = gemm ? "gemm" : layer_kernel_name(layer_->kind);
    const ErrorTally tally = verify_compute(static_cast<std::uint64_t>(bytes + ctas));
    session_.record_verification(tally);
    const std::string ctas_text = comm == "ce_copy" ? "CE" : (ctas == 0 ? "def" : std::to_string(ctas));
    std::vector<std::string> cells{
        name,
        comm,
        format_bytes(bytes),
        ctas_text,
        format_fixed(compute_alone, 1),
        format_fixed(compute_both, 1),
        format_fixed(compute_both / compute_alone, 3),
        format_fixed(comm_alone, 1),
        format_fixed(comm_both, 1),
        format_fixed(comm_both / comm_alone, 3),
        format_fixed(bus_alone, 1),
        format_fixed(bus_both, 1),
        gemm ? "-" : format_fixed(hbm_GBps, 0),
        std::to_string(both.compute_us.size()) + "/" + std::to_string(both.comm_us.size())};
    for (const std::string& cell : check_cells(tally, true)) cells.push_back(cell);
    Json record = Json::object();
    record["compute"] = name;
    record["comm"] = comm;
    record["bytes"] = static_cast<unsigned long long>(bytes);
    record["nccl_max_ctas"] = comm == "ce_copy" ? Json() : Json(static_cast<long long>(ctas));
    record["ranks"] = static_cast<long long>(gpus_.size());
    record["comm_stream_priority"] = comm_priority_ ? "highest" : "default";
    // The GEMM keeps its gemm_* names (older result files and moesim calibrate read them).
    const std::string prefix = gemm ? "gemm" : "compute";
    if (gemm) {
      record["gemm_m"] = static_cast<long long>(shape_.m);
      record["gemm_n"] = static_cast<long long>(shape_.n);
      record["gemm_k"] = static_cast<long long>(shape_.k);
      record["gemm_algo"] = gpus_.front().gemm->algo_text();
    } else {
      record["compute_shape"] = layer_->text();
      record["compute_hbm_bytes"] = compute_hbm_bytes();
      record["compute_hbm_GBps_alone"] = hbm_GBps;
    }
    record[prefix + "_alone_us"] = time_json(summarize(compute_alone_));
    if (!both.compute_us.empty()) record[prefix + "_with_comm_us"] = time_json(summarize(both.compute_us));
    record[prefix + "_slowdown"] = compute_both / compute_alone;
    record["comm_alone_us"] = time_json(summarize(alone.comm_us));
    if (!both.comm_us.empty()) record["comm_with_" + prefix + "_us"] = time_json(summarize(both.comm_us));
    record["comm_slowdown"] = comm_both / comm_alone;
    record["busbw_alone_GBps"] = bus_alone;
    record["busbw_with_" + prefix + "_GBps"] = bus_both;
    record["check"] = check_json(tally, true);
    session_.log().add_row(cells, record);
  }

  BenchSession& session_;
  bool comm_priority_;
  MatmulShape shape_;
  std::optional<LayerKernelCase> layer_;  // none: the GEMM
  std::vector<GpuState> gpus_;
  std::vector<ncclComm_t> comms_;
  bool comms_ready_ = false;
  std::int64_t comm_ctas_ = -1;
  std::vector<double> compute_alone_;
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("contention",
                       "compute slowdown under concurrent NCCL / copy-engine traffic and vice versa");
  std::vector<std::int64_t> gemm{16384, 4096, 7168};
  std::vector<std::int64_t> sizes_mib{64, 512};
  std::vector<std::int64_t> ctas{0, 8, 2};
  std::int64_t mem_mib = 256, norm_width = 2048, norm_inputs = 0, experts = 128, top_k = 8, tokens = 0;
  std::string comms = "all_reduce,all_to_all,ce_copy";
  std::string computes = "gemm,add,softmax";
  bool comm_priority = false;
  CliOptions& parser = session.parser();
  parser.add_flag("comm_priority", 0, &comm_priority, "communication stream at the highest priority");
  parser.add_int_list("gemm", 0, &gemm, "GEMM M,N,K (default: DeepSeek-V3 expert up-projection, 16K tokens)");
  parser.add_int("mem_mib", 0, &mem_mib, "main operand of the add, softmax, rmsnorm and topk kernels, MiB");
  parser.add_int("norm_width", 0, &norm_width, "rmsnorm row width (the model's hidden size)");
  parser.add_int("norm_inputs", 0, &norm_inputs,
                 "rmsnorm residual inputs added first (0-2; FarSkip fuses 1-2)");
  parser.add_int("experts", 0, &experts, "topk: experts per token's logits");
  parser.add_int("top_k", 0, &top_k, "topk: experts chosen per token");
  parser.add_int("tokens", 0, &tokens, "topk: tokens (their logits replace --mem_mib; 0: from --mem_mib)");
  parser.add_int_list("sizes_mib", 0, &sizes_mib, "communication bytes per rank, MiB");
  parser.add_int_list("ctas", 0, &ctas, "NCCL maxCTAs values (0: NCCL default)");
  parser.add_string("comms", 0, &comms, "all_reduce,all_to_all,ce_copy");
  parser.add_string("compute", 0, &computes, "gemm,add,softmax,rmsnorm,topk");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    if (gemm.size() != 3) throw ArgError("--gemm needs M,N,K");
    if (mem_mib < 1) throw ArgError("--mem_mib must be at least 1");
    if (norm_width < 8 || norm_width % 8 != 0)
      throw ArgError("--norm_width must be a positive multiple of 8");
    if (norm_inputs < 0 || norm_inputs > 2) throw ArgError("--norm_inputs must be 0, 1 or 2");
    if (experts < 1 || experts > kGateMaxExperts || top_k < 1 || top_k > experts)
      throw ArgError("--experts must be 1-" + std::to_string(kGateMaxExperts) + " and --top_k 1-experts");
    s.open({{"cuBLASLt", blaslt_version()}, {"NCCL", nccl_version_text()}});
    const std::uint64_t max_bytes =
        static_cast<std::uint64_t>(*std::max_element(sizes_mib.begin(), sizes_mib.end())) << 20;
    ContentionBench bench(s, gemm[0], gemm[1], gemm[2], max_bytes, comm_priority);
    std::vector<std::optional<LayerKernelCase>> kernels;
    if (computes.find("gemm") != std::string::npos) kernels.emplace_back();
    for (LayerKernelKind kind :
         {LayerKernelKind::ADD, LayerKernelKind::SOFTMAX, LayerKernelKind::RMSNORM, LayerKernelKind::TOPK}) {
      if (computes.find(layer_kernel_name(kind)) == std::string::npos) continue;
      LayerKernelCase k;
      k.kind = kind;
      k.bytes = static_cast<std::uint64_t>(mem_mib) << 20;
      if (kind == LayerKernelKind::TOPK && tokens > 0)
        k.bytes = static_cast<std::uint64_t>(tokens * experts * 2);
      k.width = norm_width;
      k.extra_inputs = static_cast<int>(norm_inputs);
      k.experts = static_cast<int>(experts);
      k.top_k = static_cast<int>(top_k);
      kernels.emplace_back(k);
    }
    for (const auto& kernel : kernels) {
      bench.measure_compute_alone(kernel);
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
    }
  });
}
