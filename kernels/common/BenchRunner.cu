#include <algorithm>
#include <iostream>
#include <memory>

#include "BenchRunner.hpp"
#include "DeviceInfo.hpp"
#include "PassSampler.hpp"

namespace moesim::kernels {
namespace {

__global__ void spin_kernel(long long nanoseconds) {
  const long long start = clock64();
  // clock64 counts SM cycles; 2 GHz is an upper bound, so this spins at least `nanoseconds`.
  while (clock64() - start < nanoseconds * 2) {
  }
}

}  // namespace

void hold_stream(cudaStream_t stream, double microseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<long long>(microseconds * 1e3));
  CUDA_CHECK_LAUNCH();
}

BenchSession::BenchSession(std::string benchmark, std::string description)
    : benchmark_(std::move(benchmark)),
      description_(std::move(description)),
      parser_(benchmark_ + "_bench", description_) {
  parser_.add_int("warmup_iters", 'w', &options_.warmup_iters, "untimed iterations per case", 0);
  parser_.add_int("iters", 'n', &options_.iters, "timed iterations per case", 1);
  parser_.add_int("cudagraph", 'G', &options_.graph_iters,
                  "graphs of up to K iterations for cases under 50 us (0: off)", 0);
  parser_.add_int("check", 'c', &options_.check, "verify results (0: off)", 0);
  parser_.add_int("ngpus", 'g', &options_.ngpus, "GPUs to use", 1);
  parser_.add_int("first_gpu", 0, &options_.first_gpu, "first GPU ordinal", 0);
  parser_.add_int("seed", 0, &options_.seed, "seed of the random inputs", 0);
  parser_.add_string("output_file", 'J', &options_.json_path,
                     "JSON result file (never overwritten: name.N is used instead)");
}

bool BenchSession::parse(int argc, char** argv) {
  return parser_.parse(argc, argv);
}

void BenchSession::open(const std::vector<std::pair<std::string, std::string>>& libraries) {
  int available = 0;
  CUDA_CHECK(cudaGetDeviceCount(&available));
  if (options_.first_gpu + options_.ngpus > available) {
    throw ArgError("asked for GPUs " + std::to_string(options_.first_gpu) + ".." +
                   std::to_string(options_.first_gpu + options_.ngpus - 1) + " but " +
                   std::to_string(available) + " are visible");
  }
  devices_.clear();
  for (std::int64_t i = 0; i < options_.ngpus; ++i)
    devices_.push_back(static_cast<int>(options_.first_gpu + i));

  log_ = std::make_unique<ResultLog>(ToolIdentity{benchmark_, MOESIM_KERNELS_VERSION, MOESIM_GIT_SHA},
                                     parser_.command_line(), parser_.values_as_json(), std::cout,
                                     options_.json_path);
  log_run_header(*log_, benchmark_ + ": " + description_, parser_.command_line(), devices_, libraries);
}

void log_run_header(ResultLog& log, const std::string& title, const std::vector<std::string>& command_line,
                    const std::vector<int>& devices,
                    const std::vector<std::pair<std::string, std::string>>& libraries) {
  std::string command;
  for (const std::string& arg : command_line) command += (command.empty() ? "" : " ") + arg;
  log.comment("moesim-kernels " + std::string(MOESIM_KERNELS_VERSION) + " (" + MOESIM_GIT_SHA + ") " + title);
  log.comment("Command: " + command);
  log.comment("Start: " + utc_timestamp_now());
  const std::string driver = kernel_driver_version();
  const std::string driver_api = cuda_driver_api_version();
  const std::string runtime = cuda_runtime_version();
  std::string library_text;
  Json library_json = Json::object();
  for (const auto& [name, version] : libraries) {
    library_text += "  " + name + " " + version;
    library_json[name] = version;
  }
  log.comment(std::string(kGpuApiName) + " driver " + driver + ", driver API " + driver_api + ", runtime " +
              runtime + library_text);
  Json gpus = Json::array();
  for (int device : devices) {
    const GpuDescription gpu = describe_gpu(device);
    const GpuClocks clocks = read_clocks(gpu.pci_bus_id);
    gpus.push_back(to_json(gpu, clocks));
    log.comment("GPU " + std::to_string(device) + ": " + gpu.name + " [" + gpu.pci_bus_id + "] " + gpu.arch +
                ", " + std::to_string(gpu.multiprocessors) + " SMs, " +
                std::to_string(gpu.memory_bytes >> 20) + " MiB, L2 " + std::to_string(gpu.l2_bytes >> 20) +
                " MiB, SM clock " + std::to_string(clocks.sm_mhz) + "/" + std::to_string(clocks.sm_max_mhz) +
                " MHz, memory clock " + std::to_string(clocks.memory_mhz) + "/" +
                std::to_string(clocks.memory_max_mhz) + " MHz");
    if (clocks.sm_max_mhz == 0) {
      log.warning("GPU " + std::to_string(device) + ": clocks unreadable (no NVML); lock state unknown");
    } else if (clocks.sm_mhz != clocks.sm_max_mhz) {
      log.warning("GPU " + std::to_string(device) + ": SM clock " + std::to_string(clocks.sm_mhz) +
                  " MHz at start, max " + std::to_string(clocks.sm_max_mhz) +
                  " MHz: clocks are not locked, results include boost and power/thermal throttling");
    }
  }
#ifndef NDEBUG
  log.warning("DEBUG build (NDEBUG not defined): timings are not representative");
#endif
  Json environment = Json::object();
  for (const auto& [name, value] : relevant_environment()) {
    environment[name] = value;
    log.comment("env " + name + "=" + value);
  }
  log.add_context("gpu_api", kGpuApiName);
  log.add_context("driver_version", driver);
  log.add_context("driver_api_version", driver_api);
  log.add_context("runtime_version", runtime);
  log.add_context("libraries", library_json);
  log.add_context("gpus", gpus);
  log.add_context("environment", environment);
}

void BenchSession::record_verification(const ErrorTally& tally) {
  if (tally.checked() == 0) return;
  ++cases_checked_;
  if (tally.wrong() > 0) ++cases_wrong_;
  values_wrong_ += tally.wrong();
}

int BenchSession::close() {
  if (!log_) return 1;
  ResultLog& log = *log_;
  log_end_clocks(log, devices_);
  const bool pass = values_wrong_ == 0;
  log.comment("Verified cases: " + std::to_string(cases_checked_) +
              ", with wrong values: " + std::to_string(cases_wrong_) + " (" + std::to_string(values_wrong_) +
              " values) " + (pass ? "OK" : "FAILED"));
  log.set_summary("cases_checked", static_cast<long long>(cases_checked_));
  log.set_summary("cases_wrong", static_cast<long long>(cases_wrong_));
  log.set_summary("values_wrong", static_cast<long long>(values_wrong_));
  log.set_summary("pass", pass);
  log.finish();
  return pass ? 0 : 1;
}

void log_end_clocks(ResultLog& log, const std::vector<int>& devices) {
  Json end_clocks = Json::array();
  for (int device : devices) {
    const GpuClocks clocks = read_clocks(describe_gpu(device).pci_bus_id);
    Json entry = Json::object();
    entry["index"] = device;
    entry["sm_clock_mhz"] = clocks.sm_mhz;
    entry["memory_clock_mhz"] = clocks.memory_mhz;
    end_clocks.push_back(entry);
    log.comment("GPU " + std::to_string(device) + " at end: SM clock " + std::to_string(clocks.sm_mhz) +
                " MHz, memory clock " + std::to_string(clocks.memory_mhz) + " MHz");
  }
  log.add_context("end_clocks", end_clocks);
}

EventTimeline::EventTimeline(int device, std::size_t capacity) : device_(device) {
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaEventCreate(&base_));
  starts_.resize(capacity);
  ends_.resize(capacity);
  for (std::size_t i = 0; i < capacity; ++i) {
    CUDA_CHECK(cudaEventCreate(&starts_[i]));
    CUDA_CHECK(cudaEventCreate(&ends_[i]));
  }
}

EventTimeline::~EventTimeline() {
  (void)cudaSetDevice(device_);
  (void)cudaEventDestroy(base_);
  for (cudaEvent_t event : starts_) (void)cudaEventDestroy(event);
  for (cudaEvent_t event : ends_) (void)cudaEventDestroy(event);
}

void EventTimeline::record_base(cudaStream_t stream) {
  CUDA_CHECK(cudaEventRecord(base_, stream));
}
void EventTimeline::record_start(std::size_t i, cudaStream_t stream) {
  CUDA_CHECK(cudaEventRecord(starts_.at(i), stream));
}
void EventTimeline::record_end(std::size_t i, cudaStream_t stream) {
  CUDA_CHECK(cudaEventRecord(ends_.at(i), stream));
}
void EventTimeline::synchronize(std::size_t count) {
  if (count > 0) CUDA_CHECK(cudaEventSynchronize(ends_.at(count - 1)));
}

float EventTimeline::elapsed_ms(std::size_t i) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, starts_.at(i), ends_.at(i)));
  return ms;
}
float EventTimeline::start_ms(std::size_t i) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, base_, starts_.at(i)));
  return ms;
}
float EventTimeline::end_ms(std::size_t i) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, base_, ends_.at(i)));
  return ms;
}

std::vector<TextColumn> time_columns() {
  return {{"time", "us", 10}, {"min", "us", 10}, {"p99", "us", 10}, {"cv", "%", 6}};
}

std::vector<std::string> time_cells(const SampleStats& stats_us) {
  const int precision = stats_us.p50 < 100 ? 2 : 1;
  return {format_fixed(stats_us.p50, precision), format_fixed(stats_us.min, precision),
          format_fixed(stats_us.p99, precision), format_fixed(stats_us.cv_pct, 1)};
}

Json time_json(const SampleStats& stats_us) {
  Json value = Json::object();
  value["p50"] = stats_us.p50;
  value["min"] = stats_us.min;
  value["p99"] = stats_us.p99;
  value["mean"] = stats_us.mean;
  value["max"] = stats_us.max;
  value["cv_pct"] = stats_us.cv_pct;
  value["samples"] = static_cast<unsigned long long>(stats_us.count);
  return value;
}

std::string metric_json_key(const TextColumn& column) {
  if (column.unit.empty()) return column.name;
  if (column.unit == "TFLOP/s") return column.name + "_tflops";
  if (column.unit == "GB/s") return column.name + "_GBps";
  if (column.unit == "%") return column.name + "_pct";
  std::string unit;
  for (char c : column.unit) unit += (c == '/' ? 'p' : c);
  return column.name + "_" + unit;
}

std::vector<TextColumn> check_columns() {
  return {{"#wrong", "", 7}, {"maxerr", "rel", 9}};
}

std::vector<std::string> check_cells(const ErrorTally& tally, bool checked) {
  if (!checked) return {"N/A", "N/A"};
  return {std::to_string(tally.wrong()), format_general(tally.max_relative_error(), 2)};
}

Json check_json(const ErrorTally& tally, bool checked) {
  Json value = Json::object();
  value["checked"] = checked ? static_cast<long long>(tally.checked()) : 0LL;
  value["wrong"] = checked ? Json(static_cast<long long>(tally.wrong())) : Json();
  value["max_rel_err"] = checked ? Json(tally.max_relative_error()) : Json();
  value["tolerance"] = tally.tolerance();
  return value;
}

namespace {

struct TimedSamples {
  std::vector<double> samples_us;
  std::int64_t graph_iters = 0;  ///< iterations per graph replay; 0 = plain launches
};

// Issues warm-up iterations; with -G K, probes one iteration and, when it is shorter than
// kGraphBelowUs, times graph replays of enough iterations (at most K) to span ~kGraphSpanUs.
constexpr double kGraphBelowUs = 50;
constexpr double kGraphSpanUs = 200;

TimedSamples time_iterations(const BenchSession& session, CaseBench& bench, std::size_t index) {
  const CommonOptions& options = session.options();
  const std::vector<DeviceStream> streams = bench.streams();
  const auto iters = static_cast<std::size_t>(options.iters);
  TimedSamples result;

  for (std::int64_t i = 0; i < options.warmup_iters; ++i) bench.run(index);
  for (const DeviceStream& s : streams) CUDA_CHECK(cudaStreamSynchronize(s.stream));

  if (options.graph_iters > 0 && bench.is_graph_capturable() && streams.size() == 1) {
    EventTimeline probe(streams[0].device, 3);
    for (std::size_t i = 0; i < 3; ++i) {
      probe.record_start(i, streams[0].stream);
      bench.run(index);
      probe.record_end(i, streams[0].stream);
    }
    probe.synchronize(3);
    const double probe_us = std::min({probe.elapsed_ms(0), probe.elapsed_ms(1), probe.elapsed_ms(2)}) * 1e3;
    if (probe_us < kGraphBelowUs) {
      result.graph_iters = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(kGraphSpanUs / std::max(probe_us, 1.0)), 2, options.graph_iters);
    }
  }

  cudaGraphExec_t graph_exec = nullptr;
  if (result.graph_iters > 0) {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaSetDevice(streams[0].device));
    CUDA_CHECK(cudaStreamBeginCapture(streams[0].stream, cudaStreamCaptureModeThreadLocal));
    for (std::int64_t k = 0; k < result.graph_iters; ++k) bench.run(index);
    CUDA_CHECK(cudaStreamEndCapture(streams[0].stream, &graph));
    CUDA_CHECK(instantiate_graph(&graph_exec, graph));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaGraphLaunch(graph_exec, streams[0].stream));  // warm-up replay (uploads the graph)
  }
  auto issue = [&] {
    if (graph_exec != nullptr) {
      CUDA_CHECK(cudaGraphLaunch(graph_exec, streams[0].stream));
    } else {
      bench.run(index);
    }
  };

  std::vector<std::unique_ptr<EventTimeline>> timelines;
  for (const DeviceStream& s : streams) timelines.push_back(std::make_unique<EventTimeline>(s.device, iters));
  const double hold_us = bench.hold_streams_us();
  for (std::size_t i = 0; i < iters; ++i) {
    if (hold_us > 0) {
      for (const DeviceStream& s : streams) CUDA_CHECK(cudaStreamSynchronize(s.stream));
      for (const DeviceStream& s : streams) {
        CUDA_CHECK(cudaSetDevice(s.device));
        hold_stream(s.stream, hold_us);
      }
    }
    for (std::size_t s = 0; s < streams.size(); ++s) timelines[s]->record_start(i, streams[s].stream);
    issue();
    for (std::size_t s = 0; s < streams.size(); ++s) timelines[s]->record_end(i, streams[s].stream);
  }
  for (std::size_t s = 0; s < streams.size(); ++s) timelines[s]->synchronize(iters);

  result.samples_us.assign(iters, 0.0);
  const double per_sample = result.graph_iters > 0 ? static_cast<double>(result.graph_iters) : 1.0;
  for (std::size_t i = 0; i < iters; ++i) {
    for (const auto& timeline : timelines) {
      result.samples_us[i] = std::max(result.samples_us[i], timeline->elapsed_ms(i) * 1e3 / per_sample);
    }
  }
  if (graph_exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(graph_exec));
  return result;
}

}  // namespace

void enable_peer_access(const std::vector<int>& devices) {
  for (int a : devices) {
    CUDA_CHECK(cudaSetDevice(a));
    for (int b : devices) {
      if (a == b) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue;  // copies would stage through the host: farskip-ce then says so in its timing
      const cudaError_t status = cudaDeviceEnablePeerAccess(b, 0);
      if (status != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(status);
      (void)cudaGetLastError();
    }
  }
}

void run_cases(BenchSession& session, CaseBench& bench) {
  ResultLog& log = session.log();
  std::vector<TextColumn> columns = bench.case_columns();
  for (const TextColumn& column : time_columns()) columns.push_back(column);
  for (const TextColumn& column : bench.metric_columns()) columns.push_back(column);
  for (const TextColumn& column : check_columns()) columns.push_back(column);
  log.start_table(TextTable(columns));
  if (session.options().graph_iters > 0 && !bench.is_graph_capturable()) {
    log.comment("-G ignored: this benchmark's iterations are not graph-capturable; timing plain launches");
  }

  // Per case, the SM clock and power while it ran: clocks are not locked, so a rate is only
  // comparable with another once both are read at the clock they ran at.
  std::vector<std::string> bus_ids;
  for (int device : session.devices()) bus_ids.push_back(describe_gpu(device).pci_bus_id);
  PassSampler sampler(bus_ids, bench.case_count());
  for (std::size_t index = 0; index < bench.case_count(); ++index) {
    const CaseDescription description = bench.describe(index);
    try {
      bench.init(index);
    } catch (const CaseSkipped& skipped) {
      std::string label;
      for (const std::string& cell : description.cells) label += " " + cell;
      log.comment("skipped" + label + ": " + skipped.what());
      bench.release(index);
      continue;
    }
    sampler.set_pass(index);
    const TimedSamples timed = time_iterations(session, bench, index);
    sampler.set_pass(PassSampler::kNoPass);
    const SampleStats stats = summarize(timed.samples_us);
    const bool checked = session.options().check != 0;
    ErrorTally tally(0);
    if (checked) {
      tally = bench.verify(index);
      session.record_verification(tally);
    }
    const WorkCount work = bench.bytes_and_flops(index);
    const std::vector<double> metrics = bench.metrics(index, work, stats.p50 * 1e-6);

    std::vector<std::string> cells = description.cells;
    for (const std::string& cell : time_cells(stats)) cells.push_back(cell);
    Json record = description.params;
    record["time_us"] = time_json(stats);
    record["graph_iters_per_sample"] = static_cast<long long>(timed.graph_iters);
    record["bytes"] = work.bytes;
    record["flops"] = work.flops;
    const std::vector<TextColumn> metric_columns = bench.metric_columns();
    for (std::size_t m = 0; m < metric_columns.size(); ++m) {
      const double value = m < metrics.size() ? metrics[m] : 0.0;
      cells.push_back(format_fixed(value, value < 10 ? 3 : (value < 1000 ? 2 : 1)));
      record[metric_json_key(metric_columns[m])] = value;
    }
    for (const std::string& cell : check_cells(tally, checked)) cells.push_back(cell);
    record["check"] = check_json(tally, checked);
    const PassSampler::Mean nvml = sampler.means()[index];
    if (nvml.samples > 0) {
      Json sampled = Json::object();
      sampled["sm_clock_mhz"] = nvml.sm_clock_mhz;
      sampled["sm_clock_min_mhz"] = static_cast<long long>(nvml.min_sm_clock_mhz);
      sampled["power_w"] = nvml.power_w;
      sampled["samples"] = static_cast<long long>(nvml.samples);
      sampled["clock_reasons"] = clock_reason_names(nvml.clock_reasons);
      record["nvml"] = sampled;
    }
    bench.annotate(index, record);
    log.add_row(cells, record);
    bench.release(index);
  }
}

int bench_main(int argc, char** argv, BenchSession& session, const std::function<void(BenchSession&)>& body) {
  try {
    if (!session.parse(argc, argv)) {
      std::cout << session.parser().usage();
      return 0;
    }
    body(session);
    return session.close();
  } catch (const ArgError& error) {
    std::cerr << "error: " << error.what() << "\n" << session.parser().usage();
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    std::cout << "# error: " << error.what() << "\n" << std::flush;
    return 1;
  }
}

}  // namespace moesim::kernels
