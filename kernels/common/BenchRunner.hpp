#pragma once
/**
 * @file The benchmark harness, in the shape of nccl-tests.
 *
 * A benchmark fills the CaseBench interface: its cases (the sweep: sizes or shapes), init (allocate
 * and fill inputs), run (enqueue one iteration on its streams), bytes_and_flops, verify. The runner
 * then, per case:
 *
 *   init -> warm-up iterations -> N timed iterations -> verify -> one table row + one JSON record
 *
 * Every timed iteration is bracketed by events on each of the bench's streams (several GPUs
 * included); the iteration's time is the largest bracket over the streams. Iterations are issued
 * back to back, so launch overhead is hidden when the GPU is the bottleneck. With `-G K`, a
 * graph-capturable case whose iteration takes under 50 us (a probe after warm-up) is timed as
 * replays of a CUDA graph of up to K iterations (enough to span ~200 us), so host launch cost
 * does not set the time of tiny kernels; the sample is then the replay time / iterations, and the
 * JSON record says how many ("graph_iters_per_sample", 0 = plain launches).
 *
 * Benchmarks whose measurement is not "one region per iteration" (launch overhead, contention)
 * use BenchSession, EventTimeline and summarize() directly and add their own rows.
 */
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "GpuCheck.hpp"
#include "moesim/kernels/CliOptions.hpp"
#include "moesim/kernels/ErrorTally.hpp"
#include "moesim/kernels/ResultLog.hpp"
#include "moesim/kernels/Statistics.hpp"
#include "moesim/kernels/TextTable.hpp"

namespace moesim::kernels {

/** @brief Options every benchmark has. */
struct CommonOptions {
  std::int64_t warmup_iters = 5;
  std::int64_t iters = 20;
  std::int64_t graph_iters = 0;  ///< -G K: graphs of up to K iterations for sub-50 us cases
  std::int64_t check = 1;        ///< 0 = skip verification
  std::int64_t ngpus = 1;
  std::int64_t first_gpu = 0;
  std::int64_t seed = 1234;
  std::string json_path;
};

/** @brief A case (table row) could not run on this device/library (no algorithm, too large, ...). */
class CaseSkipped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** @brief One run of one benchmark: options, devices, the result log and the pass/fail tally. */
class BenchSession {
 public:
  BenchSession(std::string benchmark, std::string description);

  CliOptions& parser() { return parser_; }
  const CommonOptions& options() const { return options_; }
  /** @brief Parses argv; false when --help was asked for. */
  bool parse(int argc, char** argv);
  /**
   * @brief Opens the log: '#' header with GPUs, clocks, driver, runtime and the given library
   * versions; the JSON context; warnings for debug builds and unlocked clocks.
   */
  void open(const std::vector<std::pair<std::string, std::string>>& libraries);
  /** @brief GPU ordinals in use: first_gpu .. first_gpu + ngpus - 1. */
  const std::vector<int>& devices() const { return devices_; }
  ResultLog& log() { return *log_; }
  /** @brief Adds one case's verification to the run's footer. */
  void record_verification(const ErrorTally& tally);
  /** @brief Footer (verification summary, end clocks) and JSON; returns 0 if nothing was wrong. */
  int close();

 private:
  std::string benchmark_;
  std::string description_;
  CommonOptions options_;
  CliOptions parser_;
  std::vector<int> devices_;
  std::unique_ptr<ResultLog> log_;
  std::int64_t cases_checked_ = 0;
  std::int64_t cases_wrong_ = 0;
  std::int64_t values_wrong_ = 0;
};

/**
 * @brief The run's '#' header (tool, command, start time, driver/runtime/library versions, one line
 * per GPU with clocks; warnings for unlocked clocks and debug builds; relevant environment) and the
 * matching JSON context. BenchSession::open uses it; programs with options of their own
 * (layer_runner) call it directly.
 */
void log_run_header(ResultLog& log, const std::string& title, const std::vector<std::string>& command_line,
                    const std::vector<int>& devices,
                    const std::vector<std::pair<std::string, std::string>>& libraries);
/** @brief End-of-run clocks of `devices` ('#' lines and the JSON "end_clocks"). */
void log_end_clocks(ResultLog& log, const std::vector<int>& devices);

/** @brief A stream that run() enqueues on, with its device (the runner times each one). */
struct DeviceStream {
  int device = 0;
  cudaStream_t stream = nullptr;
};

/** @brief Work of one iteration, for the rate columns. */
struct WorkCount {
  double bytes = 0;
  double flops = 0;
};

/** @brief Display cells and JSON parameters of one case. */
struct CaseDescription {
  std::vector<std::string> cells;  ///< one per case_columns() entry
  Json params = Json::object();    ///< copied into the JSON record
};

/** @brief The interface a sweep-style benchmark fills. */
class CaseBench {
 public:
  virtual ~CaseBench() = default;
  /** @brief Columns that identify a case (size, shape, dtype, ...). */
  virtual std::vector<TextColumn> case_columns() const = 0;
  /** @brief Rate columns computed by metrics() (GB/s, TFLOP/s, efficiency, ...). */
  virtual std::vector<TextColumn> metric_columns() const = 0;
  /** @brief The sweep: how many cases there are. */
  virtual std::size_t case_count() const = 0;
  virtual CaseDescription describe(std::size_t index) const = 0;
  /** @brief Allocates and fills inputs; may throw CaseSkipped. */
  virtual void init(std::size_t index) = 0;
  /** @brief Enqueues one iteration on streams(); must not synchronize. */
  virtual void run(std::size_t index) = 0;
  virtual std::vector<DeviceStream> streams() const = 0;
  virtual WorkCount bytes_and_flops(std::size_t index) const = 0;
  /** @brief Values for metric_columns(), from the work and the median iteration time. */
  virtual std::vector<double> metrics(std::size_t index, const WorkCount& work, double seconds) const = 0;
  /** @brief Checks the outputs of the last iteration against a reference. */
  virtual ErrorTally verify(std::size_t index) = 0;
  /** @brief Frees what init() allocated. */
  virtual void release(std::size_t /*index*/) {}
  /** @brief Adds what init() decided (e.g. the library kernel chosen) to the case's JSON record. */
  virtual void annotate(std::size_t /*index*/, Json& /*record*/) const {}
  /** @brief True when run() uses one stream and may be captured into a CUDA graph. */
  virtual bool is_graph_capturable() const { return false; }
  /**
   * @brief > 0 when issuing one iteration from the host takes long next to its device time (one
   * thread driving several GPUs): every timed iteration then starts from idle streams, each held
   * by a spin kernel this long, so the whole iteration is queued before its start event fires and
   * the streams start within a few µs of each other.
   */
  virtual double hold_streams_us() const { return 0; }
};

/** @brief Enqueues a one-thread kernel that keeps `stream` busy for at least `microseconds`. */
void hold_stream(cudaStream_t stream, double microseconds);

/**
 * @brief Lets every pair of `devices` that can reach each other directly read and write each other's
 * memory (NVLink/PCIe peer access); pairs that cannot are left alone, so their copies stage through the host.
 */
void enable_peer_access(const std::vector<int>& devices);

/** @brief Runs every case of `bench` and logs one row per case (see the file comment). */
void run_cases(BenchSession& session, CaseBench& bench);

/** @brief Per-iteration milliseconds from event pairs recorded on one stream; reusable. */
class EventTimeline {
 public:
  EventTimeline(int device, std::size_t capacity);
  ~EventTimeline();
  EventTimeline(const EventTimeline&) = delete;
  EventTimeline& operator=(const EventTimeline&) = delete;

  /** @brief Records the base event that start_ms()/end_ms() are measured from. */
  void record_base(cudaStream_t stream);
  void record_start(std::size_t i, cudaStream_t stream);
  void record_end(std::size_t i, cudaStream_t stream);
  /** @brief Waits for the last recorded end event. */
  void synchronize(std::size_t count);
  float elapsed_ms(std::size_t i) const;
  /** @brief Offsets from the base event (same device). */
  float start_ms(std::size_t i) const;
  float end_ms(std::size_t i) const;

 private:
  int device_;
  cudaEvent_t base_ = nullptr;
  std::vector<cudaEvent_t> starts_;
  std::vector<cudaEvent_t> ends_;
};

/** @brief Rate helpers: bytes / seconds in GB/s (1e9) and flops / seconds in TFLOP/s (1e12). */
inline double gigabytes_per_second(double bytes, double seconds) {
  return bytes / seconds / 1e9;
}
inline double teraflops_per_second(double flops, double seconds) {
  return flops / seconds / 1e12;
}

/** @brief Standard time columns (p50, min, p99, cv) for custom benches. */
std::vector<TextColumn> time_columns();
std::vector<std::string> time_cells(const SampleStats& stats_us);
Json time_json(const SampleStats& stats_us);
/** @brief JSON key of a metric column: "busbw" + "GB/s" -> "busbw_GBps", "TFLOP/s" -> "_tflops", "%" ->
 * "_pct". */
std::string metric_json_key(const TextColumn& column);
/** @brief Correctness columns (#wrong, max relative error). */
std::vector<TextColumn> check_columns();
std::vector<std::string> check_cells(const ErrorTally& tally, bool checked);
Json check_json(const ErrorTally& tally, bool checked);

/**
 * @brief main() of a benchmark: declares options, parses, runs `body`, prints errors.
 * Exit codes: 0 ok, 1 GPU/runtime failure or wrong results, 2 bad command line.
 */
int bench_main(int argc, char** argv, BenchSession& session, const std::function<void(BenchSession&)>& body);

}  // namespace moesim::kernels
