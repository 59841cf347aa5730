#include "moesim/calibrate/BenchResults.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "JsonText.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

using detail::JsonAt;

// Input limits (docs/limits.md): far beyond any GPU or benchmark, so that every count fits its int field
// and every rate and size stays a finite, normal double through the fits.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;    // GEMM and attention dimensions
constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;  // ranks, GPUs, experts, SMs, samples
constexpr double kMaxBytes = 1e15;
constexpr double kMaxTflops = 1e5;
constexpr double kMaxGBps = 1e7;
constexpr double kMaxMhz = 1e5;
constexpr double kMaxWatts = 1e5;

std::string profile_dtype(const JsonAt& record, const std::string& key) {
  const std::string text = record.string(key);
  if (text == "bf16" || text == "fp16" || text == "fp32") return text;
  if (text.rfind("fp8", 0) == 0) return "fp8";
  record.fail(key, "= \"" + text + "\": expected bf16, fp16, fp32 or fp8*");
}

// cuDNN reports its version as one integer: 91900 = 9.19.0 (major·10000 + minor·100 + patch).
std::string cudnn_version(const nlohmann::json& value) {
  if (!value.is_number_integer()) return value.is_string() ? value.get<std::string>() : "";
  const auto v = value.get<long long>();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::map<std::string, std::string> string_map(const JsonAt& doc, const std::string& key) {
  std::map<std::string, std::string> out;
  if (!doc.has(key)) return out;
  JsonAt object = doc.at(key);
  if (!object.value().is_object()) doc.fail(key, "must be an object");
  for (const auto& [name, value] : object.value().items()) {
    if (value.is_string()) out[name] = value.get<std::string>();
  }
  return out;
}

RunInfo harness_run(const JsonAt& doc, const std::string& benchmark) {
  RunInfo run;
  run.file = doc.file();
  run.benchmark = benchmark;
  run.start_time = doc.string("start_time");
  run.gpu_api = doc.optional_string("gpu_api").value_or("");
  run.driver = doc.optional_string("driver_version").value_or("");
  run.driver_api = doc.optional_string("driver_api_version").value_or("");
  run.runtime = doc.optional_string("runtime_version").value_or("");
  run.libraries = string_map(doc, "libraries");
  run.environment = string_map(doc, "environment");
  JsonAt gpus = doc.at("gpus");
  if (!gpus.value().is_array() || gpus.value().empty()) doc.fail("gpus", "must be a non-empty array");
  run.gpu_count = static_cast<int>(gpus.value().size());
  JsonAt first = gpus.at(std::size_t{0});
  run.gpu_name = first.string("name");
  run.gpu_arch = first.optional_string("arch").value_or("");
  run.sm_count = static_cast<int>(first.count("multiprocessors", 1, kMaxCount));
  return run;
}

// The record's "nvml" object, when it has one with at least one sample.
std::optional<NvmlReading> read_nvml(const JsonAt& r) {
  if (!r.has("nvml")) return std::nullopt;
  JsonAt n = r.at("nvml");
  if (!n.value().is_object()) r.fail("nvml", "must be an object");
  NvmlReading reading;
  reading.samples = static_cast<int>(n.count("samples", 0, std::numeric_limits<int>::max()));
  if (reading.samples <= 0) return std::nullopt;
  reading.sm_clock_hz = n.bounded("sm_clock_mhz", 1, kMaxMhz) * 1e6;
  reading.sm_clock_min_hz =
      (n.has("sm_clock_min_mhz") ? n.bounded("sm_clock_min_mhz", 0, kMaxMhz) : 0.0) * 1e6;
  reading.power_w = n.has("power_w") ? n.bounded("power_w", 0, kMaxWatts) : 0.0;
  reading.clock_reasons = n.optional_string("clock_reasons").value_or("");
  return reading;
}

void read_gemm(const JsonAt& r, BenchResults& out) {
  out.gemm.push_back({r.string("name"), r.count("m", 1, kMaxDim), r.count("n", 1, kMaxDim),
                      r.count("k", 1, kMaxDim), profile_dtype(r, "in_dtype"), r.p50_seconds("time_us"),
                      (r.has("host_us") ? r.bounded("host_us", 0, 3.6e9) : 0.0) * 1e-6, read_nvml(r)});
}

void read_grouped(const JsonAt& r, BenchResults& out) {
  out.grouped_gemm.push_back({r.string("impl"), r.count("experts", 1, kMaxCount),
                              r.count("tokens_per_expert", 1, kMaxDim), r.count("n", 1, kMaxDim),
                              r.count("k", 1, kMaxDim), profile_dtype(r, "dtype"), r.p50_seconds("time_us"),
                              read_nvml(r)});
}

void read_tile_gemm(const JsonAt& r, BenchResults& out) {
  TileGemmCase c;
  c.mode = r.string("mode");
  c.dtype = r.string("math");
  if (c.dtype != "tf32" && c.dtype != "bf16" && c.dtype != "fp16")
    r.fail("math", "= \"" + c.dtype + "\": expected tf32, bf16 or fp16");
  c.m = r.integer("m");
  c.n = r.integer("n");
  c.k = r.integer("k");
  const JsonAt tile = r.at("tile");
  if (!tile.value().is_array() || tile.value().size() != 3 ||
      !std::all_of(tile.value().begin(), tile.value().end(),
                   [](const auto& v) { return v.is_number_integer(); }))
    r.fail("tile", "must be [tile_m, tile_n, tile_k]");
  c.tile_m = tile.value()[0].get<std::int64_t>();
  c.tile_n = tile.value()[1].get<std::int64_t>();
  c.tile_k = tile.value()[2].get<std::int64_t>();
  c.blocks_per_sm = static_cast<int>(r.integer("blocks_per_sm"));
  c.blocks = r.integer("blocks");
  c.tiles = r.integer("tiles");
  c.time_s = r.p50_seconds("time_us");
  out.tile_gemm.push_back(c);
}

PowerLoad read_power_load(const JsonAt& r) {
  PowerLoad l;
  l.load = r.string("load");
  l.kind = r.string("kind");
  if (l.kind != "idle" && l.kind != "gemm" && l.kind != "copy" && l.kind != "peer")
    r.fail("kind",
           "= \"" + l.kind + "\": expected idle, gemm, copy or peer (smcopy and gemm+smcopy are skipped)");
  l.gpu = static_cast<int>(r.count("gpu", 0, kMaxCount));
  l.target_duty = r.bounded("target_duty", 0, 1);
  l.duty = r.bounded("duty", 0, 1);
  if (l.kind == "gemm") {
    l.m = r.count("m", 1, kMaxDim);
    l.n = r.count("n", 1, kMaxDim);
    l.k = r.count("k", 1, kMaxDim);
    l.dtype = profile_dtype(r, "dtype");
    l.busy_rate = r.bounded("busy_tflops", 0, kMaxTflops) * 1e12;
    l.first_rate = r.bounded("first_burst_tflops", 0, kMaxTflops) * 1e12;
  } else {
    l.busy_rate = r.bounded("busy_GBps", 0, kMaxGBps) * 1e9;
    l.first_rate = r.bounded("first_burst_GBps", 0, kMaxGBps) * 1e9;
  }
  l.sm_clock_hz = r.bounded("sm_clock_mhz", 0, kMaxMhz) * 1e6;
  l.power_w = r.bounded("power_w", 0, kMaxWatts);
  l.clock_reasons = r.string("clock_reasons");
  return l;
}

PowerRun read_power_run(const JsonAt& doc) {
  PowerRun run;
  run.file = doc.file();
  if (doc.has("power_limit_w")) {
    JsonAt limits = doc.at("power_limit_w");
    if (!limits.value().is_array()) doc.fail("power_limit_w", "must be an array of watts, one per GPU");
    for (std::size_t i = 0; i < limits.value().size(); ++i) {
      const nlohmann::json& watts = limits.value()[i];
      if (!watts.is_number() || !(watts.get<double>() >= 0 && watts.get<double>() <= kMaxWatts))
        limits.fail(std::to_string(i), "must be a number in [0, 1e5] W");
      run.limit_w = std::max(run.limit_w, watts.get<double>());
    }
  }
  run.max_clock_hz = doc.at("gpus").at(std::size_t{0}).bounded("sm_clock_max_mhz", 0, kMaxMhz) * 1e6;
  return run;
}

AttentionCase read_attention_case(const JsonAt& r, const std::string& impl) {
  AttentionCase c;
  c.impl = impl;
  const std::string pass = r.string("pass");
  if (pass != "fwd" && pass != "bwd") r.fail("pass", "= \"" + pass + "\": expected fwd or bwd");
  c.forward = pass == "fwd";
  c.batch_heads = r.count("batch_heads", 1, kMaxDim);
  c.seq_len = r.count("seq_len", 1, kMaxDim);
  c.d_qk = r.count("d_qk", 1, kMaxDim);
  c.d_v = r.count("d_v", 1, kMaxDim);
  c.time_s = r.p50_seconds("time_us");
  c.nvml = read_nvml(r);
  return c;
}

void read_collective(const JsonAt& r, const std::string& file, BenchResults& out) {
  CollectiveCase c;
  c.op = r.string("op");
  c.ranks = static_cast<int>(r.count("ranks", 1, kMaxCount));
  c.bytes = r.bounded("size_bytes", 0, kMaxBytes);
  c.time_s = r.p50_seconds("time_us");
  c.file = file;
  if (c.bytes > 0) out.collectives.push_back(c);
}

void read_contention(const JsonAt& r, const JsonAt& doc, BenchResults& out) {
  ContentionCase c;
  c.comm = r.string("comm");
  c.bytes = r.bounded("bytes", 0, kMaxBytes);
  if (r.has("nccl_max_ctas") && !r.value().at("nccl_max_ctas").is_null())
    c.ctas = static_cast<int>(r.count("nccl_max_ctas", 0, kMaxCount));
  c.ranks = static_cast<int>(r.count("ranks", 1, kMaxCount));
  c.high_priority = r.optional_string("comm_stream_priority").value_or("default") == "highest";
  c.compute = r.optional_string("compute").value_or("gemm");  // results before the memory kernels: GEMM only
  // contention_bench keeps the GEMM's gemm_* names and calls the others compute_*.
  const std::string prefix = c.compute == "gemm" ? "gemm" : "compute";
  if (c.compute == "gemm") {
    c.gemm_m = r.count("gemm_m", 1, kMaxDim);
    c.gemm_n = r.count("gemm_n", 1, kMaxDim);
    c.gemm_k = r.count("gemm_k", 1, kMaxDim);
  } else {
    c.compute_hbm_Bps = r.bounded("compute_hbm_GBps_alone", 0, kMaxGBps) * 1e9;
  }
  if (c.compute == "topk") {  // one selection per run, given on its command line
    const JsonAt options = doc.at("options");
    c.tokens = options.count("tokens", 1, kMaxDim);
    c.experts = options.count("experts", 1, kMaxCount);
    c.top_k = options.count("top_k", 1, c.experts);
  }
  c.compute_alone_s = r.p50_seconds(prefix + "_alone_us");
  if (r.has(prefix + "_with_comm_us")) c.compute_with_comm_s = r.p50_seconds(prefix + "_with_comm_us");
  c.comm_alone_s = r.p50_seconds("comm_alone_us");
  if (r.has("comm_with_" + prefix + "_us"))
    c.comm_with_compute_s = r.p50_seconds("comm_with_" + prefix + "_us");
  c.file = doc.file();
  out.contention.push_back(c);
}

// The run of a PyTorch tool's document (one GPU): its file, date, GPU and PyTorch version.
RunInfo torch_tool_run(const JsonAt& doc, const std::string& benchmark, const std::string& date_key) {
  RunInfo run;
  run.file = doc.file();
  run.benchmark = benchmark;
  run.start_time = doc.string(date_key);
  run.gpu_name = doc.optional_string("gpu").value_or("");
  run.gpu_count = 1;
  if (doc.has("torch")) run.libraries["PyTorch"] = doc.string("torch");
  return run;
}

// PyTorch SDPA's attention times (kernels/tools/torch_sdpa_compare.py), a run of their own.
void add_torch_sdpa(const JsonAt& doc, const JsonAt& results, BenchResults& out) {
  RunInfo run = torch_tool_run(doc, "torch_sdpa", "start_time");
  if (doc.has("cudnn")) run.libraries["cuDNN"] = cudnn_version(doc.value().at("cudnn"));
  out.runs.push_back(run);
  for (std::size_t i = 0; i < results.value().size(); ++i) {
    JsonAt r = results.at(i);
    out.attention.push_back(read_attention_case(r, "torch:" + r.string("backend")));
  }
}

// PyTorch's index_add_ against a dense add (kernels/tools/torch_index_add_rates.py), a run of its own.
void add_torch_index_add(const JsonAt& doc, const JsonAt& results, BenchResults& out) {
  out.runs.push_back(torch_tool_run(doc, "torch_index_add", "date_utc"));
  if (doc.string("unit") != "us") doc.fail("unit", "must be \"us\"");
  for (std::size_t i = 0; i < results.value().size(); ++i) {
    JsonAt r = results.at(i);
    AtomicAddCase a;
    a.rows = r.count("rows", 1, kMaxDim);
    a.hidden = r.count("hidden", 1, kMaxDim);
    a.dtype = r.string("dtype");
    if (a.dtype != "bfloat16" && a.dtype != "float32")
      r.fail("dtype", "= \"" + a.dtype + "\": expected bfloat16 or float32");
    // A kernel between a nanosecond and an hour, as p50_seconds takes the harness's times.
    a.time_s = r.bounded("index_add_us", 1e-3, 3.6e9) * 1e-6;
    a.dense_time_s = r.bounded("dense_add_us", 1e-3, 3.6e9) * 1e-6;
    out.atomic_adds.push_back(a);
  }
}

// Windowed and full causal attention (kernels/tools/torch_window_attention.py), a run of its own. A call a
// backend refused (out of memory) holds an "error" and no time: it is skipped.
void add_torch_window_attention(const JsonAt& doc, const JsonAt& results, BenchResults& out) {
  out.runs.push_back(torch_tool_run(doc, "torch_window_attention", "date_utc"));
  if (doc.string("unit") != "us") doc.fail("unit", "must be \"us\"");
  for (std::size_t i = 0; i < results.value().size(); ++i) {
    JsonAt r = results.at(i);
    if (r.has("error")) continue;
    WindowAttentionCase w;
    w.backend = r.string("backend");
    w.window_kind = r.string("window_kind");
    if (w.window_kind != "full" && w.window_kind != "sliding" && w.window_kind != "chunked")
      r.fail("window_kind", "= \"" + w.window_kind + "\": expected full, sliding or chunked");
    w.heads = r.count("heads", 1, kMaxDim);
    w.head_dim = r.count("head_dim", 1, kMaxDim);
    w.seq = r.count("seq", 1, kMaxDim);
    w.batch = r.count("batch", 1, kMaxDim);
    w.window = r.count("window", w.window_kind == "full" ? 0 : 1, kMaxDim);
    w.forward_s = r.bounded("forward_us", 1e-3, 3.6e9) * 1e-6;
    out.window_attention.push_back(w);
  }
}

void add_power(const JsonAt& doc, const JsonAt& results, BenchResults& out) {
  PowerRun power = read_power_run(doc);
  for (std::size_t i = 0; i < results.value().size(); ++i) {
    JsonAt r = results.at(i);
    // SM-driven copies alone and beside a GEMM (power_bench's overlap loads): the power model has no term
    // for them, so they are neither fitted nor scored; a note names each such load once.
    const std::string kind = r.string("kind");
    if (kind == "smcopy" || kind == "gemm+smcopy") {
      const std::string skipped = doc.file() + ": power_bench load " + r.string("load");
      if (std::find(out.ignored.begin(), out.ignored.end(), skipped) == out.ignored.end())
        out.ignored.push_back(skipped);
      continue;
    }
    power.loads.push_back(read_power_load(r));
  }
  out.power.push_back(std::move(power));
}

void add_document(const JsonAt& doc, BenchResults& out) {
  if (!doc.value().is_object()) throw ConfigError(doc.file(), doc.pointer(), "must be a JSON object");
  if (doc.has("suites")) {
    JsonAt suites = doc.at("suites");
    if (!suites.value().is_array()) doc.fail("suites", "must be an array of results documents");
    for (std::size_t i = 0; i < suites.value().size(); ++i) add_document(suites.at(i), out);
    return;
  }
  if (!doc.has("schema_version") || !doc.value().at("schema_version").is_number_integer() ||
      doc.value().at("schema_version").get<std::int64_t>() != 1)
    doc.fail("schema_version", "must be 1 (a kernels/ results file: see kernels/README.md)");
  const std::string tool = doc.string("tool");
  if (tool.rfind("moesim-kernels", 0) != 0 && tool != "moesim-torch-index-add-rates" &&
      tool != "moesim-torch-window-attention")
    doc.fail("tool", "= \"" + tool +
                         "\": not a kernels/ results file (expected moesim-kernels..., "
                         "moesim-torch-index-add-rates or moesim-torch-window-attention)");
  JsonAt results = doc.at("results");
  if (!results.value().is_array()) doc.fail("results", "must be an array");
  if (tool == "moesim-torch-index-add-rates") {
    add_torch_index_add(doc, results, out);
    return;
  }
  if (tool == "moesim-torch-window-attention") {
    add_torch_window_attention(doc, results, out);
    return;
  }

  if (tool == "moesim-kernels/torch_sdpa_compare.py") {
    add_torch_sdpa(doc, results, out);
    return;
  }
  if (tool != "moesim-kernels") {
    out.ignored.push_back(doc.file() + ": " + tool);
    return;
  }
  const std::string benchmark = doc.string("benchmark");
  static const std::set<std::string> used{"gemm",   "grouped_gemm", "attention",
                                          "memory", "collectives",  "contention",
                                          "launch", "power",        "tile_gemm"};
  if (used.count(benchmark) == 0) {
    out.ignored.push_back(doc.file() + ": " + benchmark);
    return;
  }
  RunInfo run = harness_run(doc, benchmark);
  out.runs.push_back(run);
  if (benchmark == "power") {
    add_power(doc, results, out);
    return;
  }
  for (std::size_t i = 0; i < results.value().size(); ++i) {
    JsonAt r = results.at(i);
    if (benchmark == "gemm") {
      read_gemm(r, out);
    } else if (benchmark == "grouped_gemm") {
      read_grouped(r, out);
    } else if (benchmark == "tile_gemm") {
      read_tile_gemm(r, out);
    } else if (benchmark == "attention") {
      out.attention.push_back(read_attention_case(r, "unfused"));
    } else if (benchmark == "memory") {
      out.memory.push_back({r.string("op"), r.bounded("bytes", 0, kMaxBytes), r.p50_seconds("time_us")});
    } else if (benchmark == "collectives") {
      read_collective(r, doc.file(), out);
    } else if (benchmark == "contention") {
      read_contention(r, doc, out);
    } else {
      out.launch.push_back({r.string("measure"), r.p50_seconds("time_us")});
    }
  }
}

}  // namespace

void add_bench_document(const std::string& text, const std::string& file, BenchResults& out) {
  const nlohmann::json document = detail::parse_json_lines(text, file);
  add_document(JsonAt(document, file), out);
}

BenchResults load_bench_results(const std::vector<std::string>& paths) {
  BenchResults out;
  for (const std::string& path : paths) add_bench_document(detail::read_text_file(path), path, out);
  return out;
}

}  // namespace moesim::calibrate
