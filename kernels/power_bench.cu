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
//   smcopy:CTAS[:DUTY]   our copy kernel of exactly CTAS blocks (256 threads, a grid-stride loop over 16-byte
//                        vectors, 4 loads in flight per thread) copies --copy_bytes on the same GPU: an
//                        SM-driven copy, as an NCCL kernel's CTAs move data (HBM read + write through the
//                        SMs); rate = bytes copied / s as copy. --copy_bytes must be a multiple of 16
//   gemm+smcopy:M:N:K:CTAS  both at once on each GPU: the GEMM bursts on one stream as gemm (always duty 1)
//                        and smcopy:CTAS on a second stream in the same burst, its repetitions sized so that
//                        alone it takes about as long as the GEMM burst; the row's rate is the GEMM's
//                        (busy = the GEMM stream's time), the record adds the copy's own rate and busy time.
//                        Power against gemm and smcopy alone: does a GEMM beside NCCL-like CTAs draw more
//                        per unit of work than the two apart?
// All GPUs of -g run the load at the same time. Between loads the GPUs rest for --rest seconds.
//
// Per load and GPU: measured duty (busy / window), the rate while busy (TFLOP/s or GB/s), the rate of
// the first burst after the rest (near the maximum clock), mean/min/max SM clock and mean board power
// from NVML sampled every ms, and every clock event reason seen ("sw_power_cap", "hw_thermal", ...).
// NVML's power reading is a driver average over a window of up to 1 s, so --measure should be >= 1.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <sstream>
#include <thread>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "LtMatmul.hpp"
#include "PassSampler.hpp"

namespace moesim::kernels {
namespace {

enum class LoadKind { IDLE, GEMM, COPY, PEER, SMCOPY, GEMM_SMCOPY };

constexpr const char* kLoadForms =
    "idle, gemm:M:N:K[:DUTY], copy[:DUTY], peer[:DUTY], smcopy:CTAS[:DUTY] or gemm+smcopy:M:N:K:CTAS";

struct Load {
  std::string text;
  LoadKind kind = LoadKind::IDLE;
  MatmulShape shape;
  double duty = 1.0;
  int ctas = 0;  ///< smcopy and gemm+smcopy: blocks of the copy kernel
};

/** @brief Whether the load's rate is the GEMM's (TFLOP/s) rather than bytes copied (GB/s). */
bool gemm_rate(LoadKind kind) {
  return kind == LoadKind::GEMM || kind == LoadKind::GEMM_SMCOPY;
}

constexpr int kCopyThreads = 256;
constexpr int kCopyUnroll = 4;

/**
 * @brief y = x over `vectors` 16-byte vectors with exactly gridDim.x blocks (an NCCL kernel's CTAs): a
 * grid-stride loop whose threads load kCopyUnroll vectors before storing them, so that a few CTAs keep
 * several loads in flight each, as NCCL's copy loops do (one load at a time would cap a CTA far lower).
 */
__global__ void sm_copy_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kCopyUnroll - 1) * stride < vectors; i += kCopyUnroll * stride) {
    uint4 v[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) v[u] = x[i + u * stride];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) y[i + u * stride] = v[u];
  }
  for (; i < vectors; i += stride) y[i] = x[i];
}

void launch_sm_copy(const DeviceBuffer& from, const DeviceBuffer& to, std::uint64_t bytes, int ctas, int reps,
                    cudaStream_t stream) {
  for (int r = 0; r < reps; ++r) {
    sm_copy_kernel<<<static_cast<unsigned>(ctas), kCopyThreads, 0, stream>>>(
        from.as<const uint4>(), to.as<uint4>(), static_cast<std::size_t>(bytes / sizeof(uint4)));
    CUDA_CHECK_LAUNCH();
  }
}

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

/** @brief `text` as a positive integer, or 0 when it is not one. */
long long positive_integer(const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  return used == text.size() && value > 0 ? value : 0;
}

std::int64_t parse_dimension(const std::string& text, const std::string& load) {
  const long long value = positive_integer(text);
  if (value == 0)
    throw ArgError("--loads: '" + load + "': dimension '" + text + "' is not a positive integer");
  return value;
}

int parse_ctas(const std::string& text, const std::string& load) {
  const long long value = positive_integer(text);
  if (value == 0 || value > INT_MAX) {
    throw ArgError("--loads: '" + load + "': CTAS '" + text + "' is not a positive integer (at most " +
                   std::to_string(INT_MAX) + "); expected " + kLoadForms);
  }
  return static_cast<int>(value);
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
  if (kind == "smcopy" && (parts.size() == 2 || parts.size() == 3)) {
    load.kind = LoadKind::SMCOPY;
    load.ctas = parse_ctas(parts[1], text);
    if (parts.size() == 3) load.duty = parse_duty(parts[2], text);
    return load;
  }
  if (kind == "gemm+smcopy" && parts.size() == 5) {
    load.kind = LoadKind::GEMM_SMCOPY;
    load.shape.m = parse_dimension(parts[1], text);
    load.shape.n = parse_dimension(parts[2], text);
    load.shape.k = parse_dimension(parts[3], text);
    load.ctas = parse_ctas(parts[4], text);
    return load;
  }
  throw ArgError("--loads: '" + text + "': expected " + kLoadForms);
}

/** @brief One stream's bursts: events around the burst in flight, and what the timed bursts add up to. */
struct BurstClock {
  cudaEvent_t start = nullptr, end = nullptr;
  double busy_ms = 0, work = 0, first_burst_ms = 0;

  void reset() { busy_ms = work = first_burst_ms = 0; }
  /** @brief Waits for the burst between start and end; returns its ms, credited as the first burst and
   * (when measuring) to the busy time with `burst_work`. */
  double finish(bool first, bool measuring, double burst_work) {
    CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
    if (first) first_burst_ms = ms;
    if (measuring) {
      busy_ms += ms;
      work += burst_work;
    }
    return ms;
  }
};

/** @brief One GPU's buffers and streams for the current load. */
struct GpuSlot {
  int device = 0;
  cudaStream_t stream = nullptr;
  BurstClock clock;
  DeviceBuffer a, b, y, workspace;
  std::unique_ptr<LtHandle> blas;  ///< per GPU: a cuBLASLt handle belongs to the device it was made on
  std::unique_ptr<LtMatmul> matmul;
  int reps = 1;  ///< operations per burst
  // gemm+smcopy: the copy beside the GEMM, on its own stream with its own events and buffers.
  cudaStream_t copy_stream = nullptr;
  BurstClock copy_clock;
  DeviceBuffer copy_a, copy_y;
  int copy_reps = 1;  ///< copies per burst
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
    const bool sm_copies = std::any_of(loads_.begin(), loads_.end(), [](const Load& l) {
      return l.kind == LoadKind::SMCOPY || l.kind == LoadKind::GEMM_SMCOPY;
    });
    if (sm_copies && (options.copy_bytes == 0 || options.copy_bytes % sizeof(uint4) != 0))
      throw ArgError("--copy_bytes must be a positive multiple of 16 for smcopy and gemm+smcopy loads");
    for (int device : session.devices()) {
      bus_ids_.push_back(describe_gpu(device).pci_bus_id);
      GpuSlot slot;
      slot.device = device;
      CUDA_CHECK(cudaSetDevice(device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaStreamCreateWithFlags(&slot.copy_stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreate(&slot.clock.start));
      CUDA_CHECK(cudaEventCreate(&slot.clock.end));
      CUDA_CHECK(cudaEventCreate(&slot.copy_clock.start));
      CUDA_CHECK(cudaEventCreate(&slot.copy_clock.end));
      slots_.push_back(std::move(slot));
    }
    Json limits = Json::array();
    for (std::size_t g = 0; g < slots_.size(); ++g) {
      const unsigned limit_mw = read_power_limit_mw(bus_ids_[g]);
      limits.push_back(limit_mw / 1000.0);
      session.log().comment("GPU " + std::to_string(slots_[g].device) + ": enforced power limit " +
                            format_fixed(limit_mw / 1000.0, 0) + " W");
    }
    session.log().add_context("power_limit_w", limits);
    session.log().start_table(TextTable({{"load", "", 30},
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
    if (std::any_of(loads_.begin(), loads_.end(),
                    [](const Load& l) { return l.kind == LoadKind::GEMM_SMCOPY; }))
      session.log().comment("gemm+smcopy rows: the GEMM's rate; a comment line after each gives the copy's");
  }

  ~PowerBench() {
    for (GpuSlot& slot : slots_) {
      (void)cudaSetDevice(slot.device);
      slot.matmul.reset();
      slot.blas.reset();
      (void)cudaEventDestroy(slot.clock.start);
      (void)cudaEventDestroy(slot.clock.end);
      (void)cudaEventDestroy(slot.copy_clock.start);
      (void)cudaEventDestroy(slot.copy_clock.end);
      (void)cudaStreamDestroy(slot.stream);
      (void)cudaStreamDestroy(slot.copy_stream);
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
      slot.clock.reset();
      slot.copy_clock.reset();
      slot.copy_reps = 1;
      if (gemm_rate(load.kind)) {
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
        if (load.kind == LoadKind::GEMM_SMCOPY) {
          slot.copy_a = DeviceBuffer(slot.device, options_.copy_bytes);
          slot.copy_y = DeviceBuffer(slot.device, options_.copy_bytes);
          fill_random(slot.copy_a.get(), DataType::BF16, options_.copy_bytes / 2, 31 + g, 1.0f, slot.stream);
        }
      } else if (load.kind != LoadKind::IDLE) {
        slot.a = DeviceBuffer(slot.device, options_.copy_bytes);
        slot.y = DeviceBuffer(slot.device, options_.copy_bytes);
        fill_random(slot.a.get(), DataType::BF16, options_.copy_bytes / 2, 31 + g, 1.0f, slot.stream);
      }
    }
    if (load.kind == LoadKind::IDLE) return;
    // One timed operation sizes the burst. gemm+smcopy also times one copy alone, after the GEMM on the
    // same stream, so that its copy burst alone lasts about as long as the GEMM burst.
    const bool side_copy = load.kind == LoadKind::GEMM_SMCOPY;
    for (GpuSlot& slot : slots_) {
      CUDA_CHECK(cudaSetDevice(slot.device));
      issue(load, slot, 1);
      CUDA_CHECK(cudaEventRecord(slot.clock.start, slot.stream));
      issue(load, slot, 1);
      CUDA_CHECK(cudaEventRecord(slot.clock.end, slot.stream));
      if (side_copy) {
        issue_side_copy(load, slot, 1, slot.stream);
        CUDA_CHECK(cudaEventRecord(slot.copy_clock.start, slot.stream));
        issue_side_copy(load, slot, 1, slot.stream);
        CUDA_CHECK(cudaEventRecord(slot.copy_clock.end, slot.stream));
      }
    }
    for (GpuSlot& slot : slots_) {
      CUDA_CHECK(cudaEventSynchronize(slot.clock.end));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, slot.clock.start, slot.clock.end));
      slot.reps = std::max(1, static_cast<int>(options_.burst_ms / std::max(ms, 1e-3f)));
      if (side_copy) {
        CUDA_CHECK(cudaEventSynchronize(slot.copy_clock.end));
        float copy_ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&copy_ms, slot.copy_clock.start, slot.copy_clock.end));
        const double gemm_burst_ms = static_cast<double>(ms) * slot.reps;
        slot.copy_reps = std::max(1, static_cast<int>(std::lround(gemm_burst_ms / std::max(copy_ms, 1e-3f))));
        if (copy_ms > 1.5 * gemm_burst_ms) {
          session_.log().warning(
              load.text + " GPU " + std::to_string(slot.device) + ": one copy takes " +
              format_fixed(copy_ms, 2) + " ms alone, longer than the GEMM burst (" +
              format_fixed(gemm_burst_ms, 2) +
              " ms): the GEMM idles in every burst; lower --copy_bytes or raise --burst_ms");
        }
      }
    }
  }

  /** @brief `reps` operations of the load on slot.stream (gemm+smcopy: its GEMMs only). */
  void issue(const Load& load, GpuSlot& slot, int reps) {
    const std::size_t peer = (&slot - slots_.data() + 1) % slots_.size();
    if (load.kind == LoadKind::SMCOPY) {
      launch_sm_copy(slot.a, slot.y, options_.copy_bytes, load.ctas, reps, slot.stream);
      return;
    }
    for (int r = 0; r < reps; ++r) {
      switch (load.kind) {
        case LoadKind::GEMM:
        case LoadKind::GEMM_SMCOPY:
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
        case LoadKind::SMCOPY:
        case LoadKind::IDLE:
          break;
      }
    }
  }

  /** @brief gemm+smcopy: `reps` copies of its copy kernel on `stream`. */
  void issue_side_copy(const Load& load, GpuSlot& slot, int reps, cudaStream_t stream) {
    launch_sm_copy(slot.copy_a, slot.copy_y, options_.copy_bytes, load.ctas, reps, stream);
  }

  double work_per_op(const Load& load) const {
    return gemm_rate(load.kind) ? load.shape.flops() : static_cast<double>(options_.copy_bytes);
  }

  /** @brief Bursts until --seconds have passed; the sampler and counters cover the last --measure. */
  void set_pass(std::size_t pass) {
    for (auto& sampler : samplers_) sampler->set_pass(pass);
  }

  void run_load(const Load& load, std::size_t index) {
    const auto start = std::chrono::steady_clock::now();
    const double measure_from = options_.seconds - options_.measure;
    const bool side_copy = load.kind == LoadKind::GEMM_SMCOPY;
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
        if (side_copy) {  // the copies first: their launches are quick, so both streams start together
          CUDA_CHECK(cudaEventRecord(slot.copy_clock.start, slot.copy_stream));
          issue_side_copy(load, slot, slot.copy_reps, slot.copy_stream);
          CUDA_CHECK(cudaEventRecord(slot.copy_clock.end, slot.copy_stream));
        }
        CUDA_CHECK(cudaEventRecord(slot.clock.start, slot.stream));
        issue(load, slot, slot.reps);
        CUDA_CHECK(cudaEventRecord(slot.clock.end, slot.stream));
      }
      double longest_ms = 0;
      for (GpuSlot& slot : slots_) {
        longest_ms = std::max(longest_ms, slot.clock.finish(first, measuring, work_per_op(load) * slot.reps));
        if (side_copy) {
          const double copy_work = static_cast<double>(options_.copy_bytes) * slot.copy_reps;
          longest_ms = std::max(longest_ms, slot.copy_clock.finish(first, measuring, copy_work));
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
      const double duty = load.kind == LoadKind::IDLE ? 0.0 : slot.clock.busy_ms / (options_.measure * 1e3);
      const bool flops = gemm_rate(load.kind);
      const double scale = flops ? 1e12 : 1e9;
      const double rate =
          slot.clock.busy_ms > 0 ? slot.clock.work / (slot.clock.busy_ms * 1e-3) / scale : 0.0;
      const double first_rate = slot.clock.first_burst_ms > 0 ? work_per_op(load) * slot.reps /
                                                                    (slot.clock.first_burst_ms * 1e-3) / scale
                                                              : 0.0;
      const std::string unit = load.kind == LoadKind::IDLE ? "" : (flops ? "TFLOP/s" : "GB/s");
      const std::string reasons = clock_reason_names(mean.clock_reasons);
      session_.log().add_row(
          {load.text, std::to_string(slot.device), format_fixed(duty, 3), format_fixed(rate, 1),
           format_fixed(first_rate, 1), unit, format_fixed(mean.sm_clock_mhz, 0),
           std::to_string(mean.min_sm_clock_mhz), format_fixed(mean.power_w, 1), reasons},
          record(load, slot, mean, duty, rate, first_rate, reasons));
      if (load.kind == LoadKind::GEMM_SMCOPY) {
        const CopyRates copy = copy_rates(slot);
        session_.log().comment(load.text + " GPU " + std::to_string(slot.device) + ": copy (" +
                               std::to_string(load.ctas) + " CTAs, " + std::to_string(slot.copy_reps) +
                               " per burst) " + format_fixed(copy.rate_GBps, 1) + " GB/s while busy, first " +
                               format_fixed(copy.first_GBps, 1) + " GB/s, busy " +
                               format_fixed(slot.copy_clock.busy_ms, 1) + " ms of the measured window");
      }
    }
  }

  struct CopyRates {
    double rate_GBps = 0, first_GBps = 0;
  };

  /** @brief gemm+smcopy: the side copy's GB/s while its stream was busy, and in the first burst. */
  CopyRates copy_rates(const GpuSlot& slot) const {
    CopyRates c;
    if (slot.copy_clock.busy_ms > 0)
      c.rate_GBps = slot.copy_clock.work / (slot.copy_clock.busy_ms * 1e-3) / 1e9;
    if (slot.copy_clock.first_burst_ms > 0) {
      c.first_GBps = static_cast<double>(options_.copy_bytes) * slot.copy_reps /
                     (slot.copy_clock.first_burst_ms * 1e-3) / 1e9;
    }
    return c;
  }

  Json record(const Load& load, const GpuSlot& slot, const PassSampler::Mean& mean, double duty, double rate,
              double first_rate, const std::string& reasons) const {
    static const char* const kKinds[] = {"idle", "gemm", "copy", "peer", "smcopy", "gemm+smcopy"};
    Json r = Json::object();
    r["load"] = load.text;
    r["kind"] = kKinds[static_cast<int>(load.kind)];
    r["gpu"] = slot.device;
    if (gemm_rate(load.kind)) {
      r["m"] = static_cast<long long>(load.shape.m);
      r["n"] = static_cast<long long>(load.shape.n);
      r["k"] = static_cast<long long>(load.shape.k);
      r["dtype"] = "bf16";
    }
    if (load.kind != LoadKind::IDLE && load.kind != LoadKind::GEMM) {
      r["bytes"] = static_cast<double>(options_.copy_bytes);
    }
    if (load.kind == LoadKind::SMCOPY || load.kind == LoadKind::GEMM_SMCOPY) r["ctas"] = load.ctas;
    r["target_duty"] = load.kind == LoadKind::IDLE ? 0.0 : load.duty;
    r["duty"] = duty;
    r[gemm_rate(load.kind) ? "busy_tflops" : "busy_GBps"] = rate;
    r[gemm_rate(load.kind) ? "first_burst_tflops" : "first_burst_GBps"] = first_rate;
    if (load.kind == LoadKind::GEMM_SMCOPY) {
      const CopyRates copy = copy_rates(slot);
      r["copy_rate_GBps"] = copy.rate_GBps;
      r["copy_first_burst_GBps"] = copy.first_GBps;
      r["copy_busy_ms"] = slot.copy_clock.busy_ms;
      r["copy_reps"] = slot.copy_reps;
    }
    r["sm_clock_mhz"] = mean.sm_clock_mhz;
    r["sm_clock_min_mhz"] = static_cast<long long>(mean.min_sm_clock_mhz);
    r["sm_clock_max_mhz"] = static_cast<long long>(mean.max_sm_clock_mhz);
    r["power_w"] = mean.power_w;
    r["samples"] = static_cast<long long>(mean.samples);
    r["clock_reasons"] = reasons;
    return r;
  }

  void release() {
    for (GpuSlot& slot : slots_) {
      slot.matmul.reset();
      slot.a.reset();
      slot.b.reset();
      slot.y.reset();
      slot.workspace.reset();
      slot.copy_a.reset();
      slot.copy_y.reset();
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
  BenchSession session("power",
                       "board power and SM clock of sustained GEMM, copy, peer-copy and SM-copy loads");
  PowerBench::Options options;
  session.parser().add_string("loads", 0, &options.loads, std::string("comma-separated: ") + kLoadForms);
  session.parser().add_double("seconds", 0, &options.seconds, "seconds each load runs");
  session.parser().add_double("measure", 0, &options.measure,
                              "seconds at the end of each load that are measured");
  session.parser().add_double("rest", 0, &options.rest, "idle seconds before each load");
  session.parser().add_double("burst_ms", 0, &options.burst_ms, "GPU time of one burst of operations");
  session.parser().add_bytes("copy_bytes", 0, &options.copy_bytes,
                             "bytes of one copy, peer copy or SM copy (smcopy: a multiple of 16)");
  return bench_main(argc, argv, session, [&](BenchSession& s) {
    s.open({{"cuBLASLt", blaslt_version()}});
    s.log().comment("no outputs to verify: the correctness columns are omitted");
    PowerBench bench(s, options);
    bench.run_all();
  });
}
