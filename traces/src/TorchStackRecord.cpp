#include "moesim/traces/TorchStackRecord.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/common/Statistics.hpp"
#include "moesim/traces/TraceFile.hpp"

namespace moesim::traces {
namespace {

namespace fs = std::filesystem;
constexpr const char* kKind = "moesim-torch-stack-run";
constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;

int bounded_int(JsonObject& o, const std::string& key) {
  const std::int64_t v = o.positive_integer(key);
  if (v > kMaxCount) o.fail(key, "is too large");
  return static_cast<int>(v);
}

std::vector<std::vector<std::int64_t>> rows_per_layer(JsonObject& config) {
  std::vector<std::vector<std::int64_t>> out;
  if (!config.has("expert_rows_rank0")) return out;
  const nlohmann::json& value = config.raw("expert_rows_rank0");
  if (value.is_null()) return out;
  auto bad = [&] { config.fail("expert_rows_rank0", "expected a list of per-expert row counts per layer"); };
  if (!value.is_array()) bad();
  for (const auto& layer : value) {
    if (!layer.is_array()) bad();
    std::vector<std::int64_t> rows;
    for (const auto& r : layer) {
      if (!r.is_number_integer() || r.get<std::int64_t>() < 0) bad();
      rows.push_back(r.get<std::int64_t>());
    }
    out.push_back(std::move(rows));
  }
  return out;
}

int width(JsonObject& o, const std::string& key) {
  const std::int64_t v = o.integer(key);
  if (v < 0 || v > kMaxCount) o.fail(key, "expected a width in [0, 2^20]");
  return static_cast<int>(v);
}

StackShape read_shape(JsonObject shape) {
  StackShape s;
  s.hidden = width(shape, "hidden");
  s.experts = width(shape, "experts");
  s.top_k = width(shape, "top_k");
  s.expert_ffn = width(shape, "expert_ffn");
  s.shared_experts = width(shape, "shared_experts");
  s.shared_ffn = width(shape, "shared_ffn");
  s.shared_gate = shape.optional_boolean("shared_gate");
  JsonObject a = shape.object("attention");
  s.attention = a.string("kind");
  s.heads = width(a, "heads");
  s.kv_heads = width(a, "kv_heads");
  s.head_dim = width(a, "head_dim");
  s.kv_lora_rank = width(a, "kv_lora_rank");
  s.q_lora_rank = width(a, "q_lora_rank");
  s.rope_head_dim = width(a, "rope_head_dim");
  s.v_head_dim = width(a, "v_head_dim");
  s.qk_norm = a.optional_boolean("qk_norm");
  return s;
}

// The median of rank's array `key`: times >= 0 (ms), or with `positive` microseconds > 0.
double median_of(JsonObject& rank, const std::string& key, bool positive = false) {
  std::vector<double> values = rank.number_array(key);
  if (values.empty()) rank.fail(key, "holds no values");
  for (double v : values)
    if (positive ? !(v > 0) : !(v >= 0))
      rank.fail(key, positive ? "must hold microseconds > 0" : "must hold times >= 0 (ms)");
  return median(values);
}

}  // namespace

std::string TorchStackRecord::config_key() const {
  return model + "|" + style + "|" + std::to_string(ep) + "|" + std::to_string(tokens) + "|" +
         std::to_string(seq) + "|" + std::to_string(layers) + "|" + phase + "|" + routing + "|" +
         std::to_string(scale) + "|" + device;
}

bool is_torch_stack_record(const nlohmann::json& document) {
  return document.is_object() && document.contains("kind") && document.at("kind") == kKind;
}

TorchStackRecord torch_stack_record_from_json(const nlohmann::json& document, const std::string& file) {
  JsonObject top(document, file);
  if (top.string("kind") != kKind) top.fail("kind", std::string("expected \"") + kKind + "\"");
  if (top.integer("schema_version") != 1) top.fail("schema_version", "expected 1");
  TorchStackRecord r;
  r.file = file;
  r.name = top.string("name");
  r.status = top.string("status");
  JsonObject config = top.object("config");
  r.model = config.string("model");
  if (auto spec = config.optional_string("model_spec")) {
    const fs::path path = fs::path(file).parent_path() / *spec;
    if (!fs::is_regular_file(path))
      config.fail("model_spec", "no such file (a path relative to the record's folder)");
    r.model_spec = path.string();
  }
  r.style = config.string("style");
  r.implementation = config.optional_string("implementation").value_or("");
  r.schedule = config.string("schedule");
  r.phase = config.string("phase");
  if (r.phase != "forward" && r.phase != "train") config.fail("phase", "expected forward or train");
  r.routing = config.string("routing");
  r.dtype = config.string("dtype");
  r.tokens = config.positive_integer("tokens");
  r.seq = config.positive_integer("seq");
  r.layers = bounded_int(config, "layers");
  r.ep = bounded_int(config, "ep");
  r.scale = bounded_int(config, "scale");
  r.seed = static_cast<std::uint64_t>(config.integer("seed"));
  r.expert_rows_rank0 = rows_per_layer(config);
  r.shape = read_shape(config.object("shape"));
  JsonObject provenance = top.object("provenance");
  r.date_utc = provenance.optional_string("date_utc").value_or("");
  if (auto host = provenance.optional_object("host"))
    r.cpu_model = host->optional_string("cpu_model").value_or("");
  if (r.status != "ok") return r;
  JsonObject step = top.object("timing").object("step");
  r.step_ms_p50 = step.positive("p50");
  r.step_ms_min = step.positive("min");
  r.step_ms_max = step.positive("max");
  if (auto speedup = top.object("timing").optional_object("speedup")) {
    const std::vector<double> ci = speedup->number_array("ci95");
    if (ci.size() != 2) speedup->fail("ci95", "expected [low, high]");
    r.speedup = TorchStackRecord::MeasuredSpeedup{speedup->positive("estimate"), ci[0], ci[1]};
  }
  std::vector<JsonObject> ranks = top.object_array("ranks");
  if (ranks.empty()) top.fail("ranks", "holds no ranks");
  JsonObject& rank0 = ranks.front();
  r.issue_ms_p50 = median_of(rank0, "issue_ms");
  if (rank0.has("forward_issue_ms")) r.forward_issue_ms_p50 = median_of(rank0, "forward_issue_ms");
  r.gpu_ms_p50 = median_of(rank0, "gpu_ms");
  if (rank0.has("host_probe_us")) {
    double sum = 0;
    for (JsonObject& rank : ranks) {
      const double probe = median_of(rank, "host_probe_us", true);
      if (&rank == &rank0) r.host_probe_us_rank0 = probe;
      sum += probe;
    }
    r.host_probe_us_mean = sum / static_cast<double>(ranks.size());
  }
  // A CPU run records no GPU (null).
  if (rank0.has("gpu_before") && !rank0.raw("gpu_before").is_null())
    r.device = rank0.object("gpu_before").optional_string("name").value_or("");
  const fs::path dir = fs::path(file).parent_path();
  if (top.has("traces")) {
    const nlohmann::json& traces = top.raw("traces");
    if (!traces.is_array()) top.fail("traces", "expected a list of trace file names");
    for (const auto& t : traces) {
      if (!t.is_string()) top.fail("traces", "expected a list of trace file names");
      const fs::path path = dir / t.get<std::string>();
      if (fs::is_regular_file(path)) r.traces.push_back(path.string());
    }
  }
  return r;
}

TorchStackRecord read_torch_stack_record(const std::string& file) {
  return torch_stack_record_from_json(parse_json_text(read_trace_text(file), file), file);
}

std::optional<std::string> record_beside_trace(const std::string& trace_file) {
  const std::string marker = ".rank";
  const std::size_t at = trace_file.rfind(marker);
  if (at == std::string::npos) return std::nullopt;
  const std::string record = trace_file.substr(0, at) + ".json";
  if (!fs::is_regular_file(record)) return std::nullopt;
  return record;
}

}  // namespace moesim::traces
