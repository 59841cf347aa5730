// power_bench: board power and SM clock under sustained loads, the inputs of moesim's power-cap
// clock model (calibrate/src/PowerFit.cpp).
//
// A GPU that draws its power limit lowers its SM clock. Whether a schedule that removes idle waits
// (FarSkip) gains what the simulator predicts depends on how much power each kind of work draws and
// on how the clock falls as the draw hits the cap; these loads measure both.
//
// Loads (--loads, comma-separated); each runs --seconds, and the last --measure seconds are measured:
//   idle                 nothing enqueued (the board's idle power)
//   gemm:M:N:K[:DUTY]    bf16 cuBLASLt products Y[M,N] = X[M,K]·W[N,K]ᵀ back to back, in bursts of about
//                        --burst_ms; with DUTY < 1 the host sleeps after each burst so that the GPU idles
//                        (1 - DUTY) of the time
//   copy[:DUTY]          device-to-device cudaMemcpyAsync of --copy_bytes (HBM read + write, copy engine)
//   peer[:DUTY]          with -g >= 2: GPU i copies --copy_bytes to GPU i+1 (mod g) with cudaMemcpyPeerAsync,
//                        all GPUs at once (copy engines over NVLink, as the copy-engine all-to-all)
// All GPUs of -g run the load at the same time. Between loads the GPUs rest for --rest seconds.
//
// Per load and GPU: measured duty (busy / window), the rate while busy (TFLOP/s or GB/s), the rate of
// the first burst after the rest (near the maximum clock), mean/min/max SM clock and mean board power
// from NVML sampled every ms, and every clock event reason seen ("sw_power_cap", "hw_thermal", ...).
// NVML's power reading is a driver average over a window of up to 1 s, so --measure should be >= 1.
#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <thread>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "LtMatmul.hpp"
#include "PassSampler.hpp"

namespace moesim::kernels {
namespace {

enum class LoadKind { IDLE, GEMM, COPY, PEER };

struct Load {
  std::string text;
  LoadKind kind = LoadKind::IDLE;
  MatmulShape shape;
  double duty = 1.0;
};

double parse_duty(const std::string& text, const std::string& load) {
  std::size_t used = 0;
  double duty = 0;
  try {
    duty = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(duty > 0.0 && duty <= 1.0))
    throw ArgError("--loads: '" + load + "': duty '" + text + "' is not a number in (0, 1]");
  return duty;
}

std::int64_t parse_dimension(const std::string& text, const std::string& load) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0)
    throw ArgError("--loads: '" + load + "': dimension '" + text + "' is not a positive integer");
  return value;
}

Load parse_load(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');) parts.push_back(part);
  Load load;
  load.text = text;
  const std::string& kind = parts.empty() ? text : parts.front();
  if (kind == "idle" && parts.size() == 1) return load;
  if (kind == "gemm" && (parts.size() == 4 || parts.size() == 5)) {
    load.kind = LoadKind::GEMM;
    load.shape.m = parse_dimension(parts[1], text);
    load.shape.n = parse_dimension(parts[2], text);
    load.shape.k = parse_dimension(parts[3], text);
    if (parts.size() == 5) load.duty = parse_duty(parts[4], text);
    return load;
  }
  if ((kind == "copy" || kind == "peer") && parts.size() <= 2) {
    load.kind = kind == "copy" ? LoadKind::COPY : LoadKind::PEER;
    if (parts.size() == 2) load.duty = parse_duty(parts[1], text);
    return load;
  }
  throw ArgError("--loads: '" + text + "': expected idle, gemm:M:N:K[:DUTY], copy[:DUTY] or peer[:DUTY]");
}

/** @brief One GPU's buffers and stream for the current load. */
struct GpuSlot {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  DeviceBuffer a, b, y, workspace;
  std::unique_ptr<LtHandle> blas;  ///< per GPU: a cuBLASLt handle belongs to the device it was made on
  std::unique_ptr<LtMatmul> matmul;
  int reps = 1;  ///< operations per burst
  double busy_ms = 0, work = 0, first_burst_ms = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class PowerBench {
 public:
  struct Options {
    std::string loads =
        "idle,gemm:8192:8192:8192,gemm:8192:8192:8192:0.75,gemm:8192:8192:8192:0.5,gemm:8192:8192:8192:0.25,"
        "gemm:4096:28672:4096,gemm:4096:4096:14336,gemm:16384:6144:4096,gemm:4096:1536:2048,"
        "gemm:4096:2048:768,gemm:1024:1536:2048,copy,copy:0.5";
    double seconds = 2.5;
    double measure = 1.5;
    double rest = 0.5;
    double burst_ms = 10;
    std::uint64_t copy_bytes = 1ull << 30;
  };

  PowerBench(BenchSession& session, const Options& options) : session_(session), options_(options) {
    if (!(options.measure > 0 && options.measure < options.seconds))
      throw ArgError("--measure must be > 0 and below --seconds");
    std::stringstream stream(options.loads);
    for (std::string item; std::getline(stream, item, ',');) loads_.push_back(parse_load(item));
    for (int device : session.devices()) {
      bus_ids_.push_back(describe_gpu(device).pci_bus_id);
      GpuSlot slot;
      slot.device = device;
      CUDA_CHECK(cudaSetDevice(device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreate(&slot.start));
      CUDA_CHECK(cudaEventCreate(&slot.end));
      slots_.push_back(std::move(slot));
    }
    JsonValue limits = JsonValue::array();
    for (std::size_t g = 0; g < slots_.size(); ++g) {
      const unsigned limit_mw = read_power_limit_mw(bus_ids_[g]);
      limits.push_back(limit_mw / 1000.0);
      session.log().comment("GPU " + std::to_string(slots_[g].device) + ": enforced power limit " +
                            format_fixed(limit_mw / 1000.0, 0) + " W");
    }
    session.log().add_context("power_limit_w", limits);
    session.log().start_table(TextTable({{"load", "", 24},
                                         {"gpu", "", 3},
                                         {"duty", "", 5},
                                         {"rate", "", 8},
                                         {"first", "", 8},
                                         {"unit", "", 7},
                                         {"clock", "MHz", 6},
                                         {"min", "MHz", 6},
                                         {"power", "W", 6},
                                         {"reasons", "", 24}}));
    session.log().comment(
        "rate = work / busy time in the measured window; first = the first burst after the rest");
  }

  ~PowerBench() {
    for (GpuSlot& slot : slots_) {
      (void)cudaSetDevice(slot.device);
      slot.matmul.reset();
      slot.blas.reset();
      (void)cudaEventDestroy(slot.start);
      (void)cudaEventDestroy(slot.end);
      (void)cudaStreamDestroy(slot.stream);
    }
  }

  void run_all() {
    if (has_peer() && slots_.size() < 2) throw ArgError("--loads: 'peer' needs -g 2 or more");
    for (const std::string& bus : bus_ids_)
      samplers_.push_back(std::make_unique<PassSampler>(std::vector<std::string>{bus}, loads_.size()));
    // Without peer access a peer copy stages through host memory (36 GB/s instead of NVLink's ~370).
    if (has_peer()) enable_peer_access(session_.devices());
    for (GpuSlot& slot : slots_) {
      CUDA_CHECK(cudaSetDevice(slot.device));
      slot.blas = std::make_unique<LtHandle>();
    }
    for (std::size_t l = 0; l < loads_.size(); ++l) {
      prepare(loads_[l]);
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.rest));
      run_load(loads_[l], l);
      report(loads_[l], l);
      release();
    }
  }

 private:
  bool has_peer() const {
    return std::any_of(loads_.begin(), loads_.end(), [](const Load& l) { return l.kind == LoadKind::PEER; });
  }

  void prepare(const Load& load) {
    for (std::size_t g = 0; g < slots_.size(); ++g) {
      GpuSlot& slot = slots_[g];
      CUDA_CHECK(cudaSetDevice(slot.device));
      slot.busy_ms = slot.work = slot.first_burst_ms = 0;
      if (load.kind == LoadKind::GEMM) {
        // Random operands: all-zero data draws less power and would inflate the clock.
        slot.a = DeviceBuffer(slot.device, static_cast<std::size_t>(load.shape.a_elements()) * 2);
        slot.b = DeviceBuffer(slot.device, static_cast<std::size_t>(load.shape.b_elements()) * 2);
        slot.y = DeviceBuffer(slot.device, static_cast<std::size_t>(load.shape.y_elements()) * 2);
        slot.workspace = DeviceBuffer(slot.device, LtMatmul::kWorkspaceBytes);
        fill_random(slot.a.get(), DataType::BF16, static_cast<std::size_t>(load.shape.a_elements()), 11 + g,
                    1.0f, slot.stream);
        fill_random(slot.b.get(), DataType::BF16, static_cast<std::size_t>(load.shape.b_elements()), 23 + g,
                    1.0f, slot.stream);
        slot.matmul = std::make_unique<LtMatmul>(*slot.blas, load.shape);
      } else if (load.kind != LoadKind::IDLE) {
        slot.a = DeviceBuffer(slot.device, options_.copy_bytes);
        slot.y = DeviceBuffer(slot.device, options_.copy_bytes);
        fill_random(slot.a.get(), DataType::BF16, options_.copy_bytes / 2, 31 + g, 1.0f, slot.stream);
      }
    }
    if (load.kind == LoadKind::IDLE) return;
    // One timed operation sizes the burst.
    for (GpuSlot& slot : slots_) {
      CUDA_CHECK(cudaSetDevice(slot.device));
      issue(load, slot, 1);
      CUDA_CHECK(cudaEventRecord(slot.start, slot.stream));
      issue(load, slot, 1);
      CUDA_CHECK(cudaEventRecord(slot.end, slot.stream));
    }
    for (GpuSlot& slot : slots_) {
      CUDA_CHECK(cudaEventSynchronize(slot.end));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, slot.start, slot.end));
      slot.reps = std::max(1, static_cast<int>(options_.burst_ms / std::max(ms, 1e-3f)));
    }
  }

  void issue(const Load& load, GpuSlot& slot, int reps) {
    const std::size_t peer = (&slot - slots_.data() + 1) % slots_.size();
    for (int r = 0; r < reps; ++r) {
      switch (load.kind) {
        case LoadKind::GEMM:
          slot.matmul->run(slot.a.get(), slot.b.get(), slot.y.get(), slot.workspace.get(), slot.stream);
          break;
        case LoadKind::COPY:
          CUDA_CHECK(cudaMemcpyAsync(slot.y.get(), slot.a.get(), options_.copy_bytes,
                                     cudaMemcpyDeviceToDevice, slot.stream));
          break;
        case LoadKind::PEER:
          CUDA_CHECK(cudaMemcpyPeerAsync(slots_[peer].y.get(), slots_[peer].device, slot.a.get(), slot.device,
                                         options_.copy_bytes, slot.stream));
          break;
        case LoadKind::IDLE:
          break;
      }
    }
  }

  double work_per_op(const Load& load) const {
    return load.kind == LoadKind::GEMM ? load.shape.flops() : static_cast<double>(options_.copy_bytes);
  }

  /** @brief Bursts until --seconds have passed; the sampler and counters cover the last --measure. */
  void set_pass(std::size_t pass) {
    for (auto& sampler : samplers_) sampler->set_pass(pass);
  }

  void run_load(const Load& load, std::size_t index) {
    const auto start = std::chrono::steady_clock::now();
    const double measure_from = options_.seconds - options_.measure;
    bool measuring = false, first = true;
    while (seconds_since(start) < options_.seconds) {
      if (!measuring && seconds_since(start) >= measure_from) {
        measuring = true;
        set_pass(index);
      }
      if (load.kind == LoadKind::IDLE) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      for (GpuSlot& slot : slots_) {
        CUDA_CHECK(cudaSetDevice(slot.device));
        CUDA_CHECK(cudaEventRecord(slot.start, slot.stream));
        issue(load, slot, slot.reps);
        CUDA_CHECK(cudaEventRecord(slot.end, slot.stream));
      }
      double longest_ms = 0;
      for (GpuSlot& slot : slots_) {
        CUDA_CHECK(cudaEventSynchronize(slot.end));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, slot.start, slot.end));
        longest_ms = std::max(longest_ms, static_cast<double>(ms));
        if (first) slot.first_burst_ms = ms;
        if (measuring) {
          slot.busy_ms += ms;
          slot.work += work_per_op(load) * slot.reps;
        }
      }
      first = false;
      if (load.duty < 1.0)
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(longest_ms * (1 - load.duty) / load.duty));
    }
    set_pass(PassSampler::kNoPass);
    CUDA_CHECK_LAUNCH();
  }

  void report(const Load& load, std::size_t index) {
    for (std::size_t g = 0; g < slots_.size(); ++g) {
      const GpuSlot& slot = slots_[g];
      const PassSampler::Mean mean = samplers_[g]->means()[index];
      const double duty = load.kind == LoadKind::IDLE ? 0.0 : slot.busy_ms / (options_.measure * 1e3);
      const bool flops = load.kind == LoadKind::GEMM;
      const double scale = flops ? 1e12 : 1e9;
      const double rate = slot.busy_ms > 0 ? slot.work / (slot.busy_ms * 1e-3) / scale : 0.0;
      const double first_rate = slot.first_burst_ms > 0
                                    ? work_per_op(load) * slot.reps / (slot.first_burst_ms * 1e-3) / scale
                                    : 0.0;
      const std::string unit = load.kind == LoadKind::IDLE ? "" : (flops ? "TFLOP/s" : "GB/s");
      const std::string reasons = clock_reason_names(mean.clock_reasons);
      session_.log().add_row(
          {load.text, std::to_string(slot.device), format_fixed(duty, 3), format_fixed(rate, 1),
           format_fixed(first_rate, 1), unit, format_fixed(mean.sm_clock_mhz, 0),
           std::to_string(mean.min_sm_clock_mhz), format_fixed(mean.power_w, 1), reasons},
          record(load, slot, mean, duty, rate, first_rate, reasons));
    }
  }

  JsonValue record(const Load& load, const GpuSlot& slot, const PassSampler::Mean& mean, double duty,
                   double rate, double first_rate, const std::string& reasons) const {
    static const char* const kKinds[] = {"idle", "gemm", "copy", "peer"};
    JsonValue r = JsonValue::object();
    r.set("load", load.text);
    r.set("kind", kKinds[static_cast<int>(load.kind)]);
    r.set("gpu", slot.device);
    if (load.kind == LoadKind::GEMM) {
      r.set("m", static_cast<long long>(load.shape.m));
      r.set("n", static_cast<long long>(load.shape.n));
      r.set("k", static_cast<long long>(load.shape.k));
      r.set("dtype", "bf16");
    } else if (load.kind != LoadKind::IDLE) {
      r.set("bytes", static_cast<double>(options_.copy_bytes));
    }
    r.set("target_duty", load.kind == LoadKind::IDLE ? 0.0 : load.duty);
    r.set("duty", duty);
    r.set(load.kind == LoadKind::GEMM ? "busy_tflops" : "busy_GBps", rate);
    r.set(load.kind == LoadKind::GEMM ? "first_burst_tflops" : "first_burst_GBps", first_rate);
    r.set("sm_clock_mhz", mean.sm_clock_mhz);
    r.set("sm_clock_min_mhz", static_cast<long long>(mean.min_sm_clock_mhz));
    r.set("sm_clock_max_mhz", static_cast<long long>(mean.max_sm_clock_mhz));
    r.set("power_w", mean.power_w);
    r.set("samples", static_cast<long long>(mean.samples));
    r.set("clock_reasons", reasons);
    return r;
  }

  void release() {
    for (GpuSlot& slot : slots_) {
      slot.matmul.reset();
      slot.a.reset();
      slot.b.reset();
      slot.y.reset();
      slot.workspace.reset();
    }
  }

  BenchSession& session_;
  Options options_;
  std::vector<Load> loads_;
  std::vector<std::string> bus_ids_;
  std::vector<GpuSlot> slots_;
  std::vector<std::unique_ptr<PassSampler>> samplers_;  ///< one per GPU, so rows are per GPU
};

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  using namespace moesim::kernels;
  BenchSession session("power", "board power and SM clock of sustained GEMM, copy and peer-copy loads");
  PowerBench::Options options;
  session.parser().add_string("loads", 0, &options.loads,
                              "comma-separated: idle, gemm:M:N:K[:DUTY], copy[:DUTY], peer[:DUTY]");
  session.parser().add_double("seconds", 0, &options.seconds, "seconds each load runs");
  session.parser().add_double("measure", 0, &options.measure,
                              "seconds at the end of each load that are measured");
  session.parser().add_double("rest", 0, &options.rest, "idle seconds before each load");
  session.parser().add_double("burst_ms", 0, &options.burst_ms, "GPU time of one burst of operations");
  session.parser().add_bytes("copy_bytes", 0, &options.copy_bytes, "bytes of one copy or peer copy");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({{"cuBLASLt", blaslt_version()}});
    s.log().comment("no outputs to verify: the correctness columns are omitted");
    PowerBench bench(s, options);
    bench.run_all();
  });
}
