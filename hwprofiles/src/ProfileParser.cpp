#include "ProfileParser.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ProfileUnits.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::hw::detail {
namespace {

using units::kGB;
using units::kGbps;
using units::kGBps;
using units::kMHz;
using units::kMiB;
using units::kNs;
using units::kPjPerByte;
using units::kTflops;
using units::kUs;

// Counts (SMs, GPUs, links) are stored as int; anything beyond int is a typo, not hardware.
int count(JsonObject& obj, const std::string& key) {
  std::int64_t value = obj.integer(key);
  if (value > std::numeric_limits<int>::max() || value < std::numeric_limits<int>::min()) {
    obj.fail(key, "is out of range");
  }
  return static_cast<int>(value);
}

// A file value in its key's unit, as SI; a value whose conversion overflows (1e308 GB/s) is no quantity.
double scaled(JsonObject& obj, const std::string& key, double unit) {
  const double value = obj.number(key) * unit;
  if (!std::isfinite(value)) obj.fail(key, "is too large to be a physical value (docs/limits.md)");
  return value;
}

std::string dtype_list() {
  std::string out;
  for (const auto& dtype : known_dtypes()) out += (out.empty() ? "" : ", ") + dtype;
  return out;
}

// An object keyed by dtype ("bf16": 989.4, ...), each value scaled by `unit`.
std::map<std::string, double> dtype_map(JsonObject& obj, const std::string& key, double unit) {
  const auto& raw = obj.raw(key);
  const std::string pointer = obj.child_pointer(key);
  if (!raw.is_object()) throw ConfigError(obj.file(), pointer, "expected an object keyed by dtype");
  std::map<std::string, double> out;
  const auto& known = known_dtypes();
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const std::string entry = pointer + "/" + it.key();
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      throw ConfigError(obj.file(), entry, "is not a known dtype (known: " + dtype_list() + ")");
    }
    if (!it.value().is_number()) throw ConfigError(obj.file(), entry, "expected a number");
    out[it.key()] = it.value().get<double>() * unit;
    if (!std::isfinite(out[it.key()])) {
      throw ConfigError(
          obj.file(), entry,
          "= " + shown_value(it.value()) + ": is too large to be a physical value (docs/limits.md)");
    }
  }
  return out;
}

std::vector<std::vector<double>> number_grid(JsonObject& obj, const std::string& key) {
  const auto& raw = obj.raw(key);
  const std::string pointer = obj.child_pointer(key);
  if (!raw.is_array()) throw ConfigError(obj.file(), pointer, "expected an array of rows");
  std::vector<std::vector<double>> grid;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string row_pointer = pointer + "/" + std::to_string(i);
    if (!raw[i].is_array()) throw ConfigError(obj.file(), row_pointer, "expected an array of numbers");
    std::vector<double> row;
    for (std::size_t j = 0; j < raw[i].size(); ++j) {
      if (!raw[i][j].is_number()) {
        throw ConfigError(obj.file(), row_pointer + "/" + std::to_string(j), "expected a number");
      }
      row.push_back(raw[i][j].get<double>());
    }
    grid.push_back(std::move(row));
  }
  return grid;
}

template <typename Enum>
Enum enum_value(JsonObject& obj, const std::string& key, std::optional<Enum> (*parse)(std::string_view),
                const std::string& choices) {
  std::string text = obj.string(key);
  auto value = parse(text);
  if (!value) obj.fail(key, "must be one of " + choices);
  return *value;
}

Provenance parse_provenance(JsonObject obj) {
  Provenance p;
  p.kind = enum_value(obj, "kind", try_parse_provenance_kind, provenance_kind_choices());
  const auto& sources = obj.raw("sources");
  if (!sources.is_array()) obj.fail("sources", "expected an array of strings");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].is_string()) {
      throw ConfigError(obj.file(), obj.child_pointer("sources") + "/" + std::to_string(i),
                        "expected a string");
    }
    p.sources.push_back(sources[i].get<std::string>());
  }
  p.date = obj.optional_string("date").value_or("");
  p.device = obj.optional_string("device").value_or("");
  p.driver = obj.optional_string("driver").value_or("");
  p.libraries = obj.optional_string("libraries").value_or("");
  obj.finish();
  return p;
}

GpuSpec parse_gpu(JsonObject obj) {
  GpuSpec g;
  g.name = obj.string("name");
  g.sm_count = count(obj, "sm_count");
  g.peak_clock_hz = scaled(obj, "peak_clock_mhz", kMHz);
  g.max_boost_clock_hz = scaled(obj, "max_boost_clock_mhz", kMHz);
  g.sustained_clock_factor = obj.number("sustained_clock_factor");
  g.peak_flops = dtype_map(obj, "peak_tflops", kTflops);
  g.hbm_bytes = scaled(obj, "hbm_GB", kGB);
  g.hbm_bw_Bps = scaled(obj, "hbm_bw_GBps", kGBps);
  g.l2_bytes = scaled(obj, "l2_MiB", kMiB);
  g.llc_bytes = scaled(obj, "llc_MiB", kMiB);
  g.launch_overhead_s = scaled(obj, "launch_overhead_us", kUs);
  g.blas_call_overhead_s =
      (obj.has("blas_call_overhead_us") ? scaled(obj, "blas_call_overhead_us", kUs) : 0.0);
  g.copy_launch_overhead_s =
      (obj.has("copy_launch_overhead_us") ? scaled(obj, "copy_launch_overhead_us", kUs) : 0.0);
  g.graph_launch_overhead_s = scaled(obj, "graph_launch_overhead_us", kUs);
  g.graph_node_overhead_s = scaled(obj, "graph_node_overhead_us", kUs);
  g.kernel_min_s = scaled(obj, "kernel_min_us", kUs);
  if (obj.has("atomic_add_bf16_G_per_s"))
    g.atomic_add_bf16_per_s = obj.number("atomic_add_bf16_G_per_s") * 1e9;
  g.source = obj.string("source");
  obj.finish();
  return g;
}

EfficiencyCurve parse_curve(JsonObject obj, const std::string& axis_key) {
  EfficiencyCurve c;
  c.x = obj.number_array(axis_key);
  c.value = obj.number_array("value");
  c.source = obj.string("source");
  obj.finish();
  return c;
}

GemmEfficiencyTable parse_gemm(JsonObject obj) {
  GemmEfficiencyTable t;
  t.m = obj.number_array("m");
  t.min_nk = obj.number_array("min_nk");
  t.value = number_grid(obj, "value");
  t.source = obj.string("source");
  obj.finish();
  return t;
}

GemmShapeCurves parse_gemm_shapes(JsonObject obj) {
  GemmShapeCurves curves;
  for (JsonObject entry : obj.object_array("shapes")) {
    GemmShapeCurve c;
    c.n = entry.positive_integer("n");
    c.k = entry.positive_integer("k");
    c.m = entry.number_array("m");
    c.value = entry.number_array("value");
    entry.finish();
    curves.shapes.push_back(std::move(c));
  }
  curves.source = obj.string("source");
  obj.finish();
  return curves;
}

RouterTopkTable parse_router_topk(JsonObject obj) {
  RouterTopkTable t;
  for (JsonObject point : obj.object_array("points")) {
    t.top_k.push_back(point.number("top_k"));
    t.experts.push_back(point.number("experts"));
    t.fixed_s.push_back(scaled(point, "fixed_us", kUs));
    t.s_per_token.push_back(scaled(point, "ns_per_token", kNs));
    t.comm_slowdown.push_back(point.number("comm_slowdown"));
    t.comm_drag.push_back(point.number("comm_drag"));
    point.finish();
  }
  t.source = obj.string("source");
  obj.finish();
  return t;
}

TileGemmSpec parse_tile_gemm(JsonObject obj) {
  TileGemmSpec t;
  JsonObject tile = obj.object("tile");
  t.tile_m = tile.positive_integer("m");
  t.tile_n = tile.positive_integer("n");
  t.tile_k = tile.positive_integer("k");
  tile.finish();
  t.blocks_per_sm = static_cast<int>(obj.positive_integer("blocks_per_sm"));
  t.value = dtype_map(obj, "value", 1.0);
  t.source = obj.string("source");
  obj.finish();
  return t;
}

// A fused attention curve over seq, with the sequences x heads it was measured at where given.
EfficiencyCurve parse_attention_curve(JsonObject obj) {
  const std::int64_t batch_heads = obj.has("batch_heads") ? obj.positive_integer("batch_heads") : 0;
  EfficiencyCurve curve = parse_curve(obj, "seq");
  curve.batch_heads = batch_heads;
  return curve;
}

EfficiencySpec parse_efficiency(JsonObject obj) {
  EfficiencySpec e;
  e.gemm = parse_gemm(obj.object("gemm"));
  if (auto shapes = obj.optional_object("gemm_shapes")) e.gemm_shapes = parse_gemm_shapes(std::move(*shapes));
  e.gemm_dtype_factor = dtype_map(obj, "gemm_dtype_factor", 1.0);
  e.grouped_gemm_factor = obj.number("grouped_gemm_factor");
  e.attention_fwd = parse_attention_curve(obj.object("attention_fwd"));
  if (auto unfused = obj.optional_object("attention_unfused_fwd"))
    e.attention_unfused_fwd = parse_curve(*unfused, "seq");
  e.attention_bwd_factor = obj.number("attention_bwd_factor");
  if (auto backward = obj.optional_object("attention_bwd"))
    e.attention_bwd = parse_attention_curve(*backward);
  if (auto rows = obj.optional_object("attention_rows")) {
    e.attention_rows.overhead_keys = rows->number("overhead_keys");
    e.attention_rows.source = rows->string("source");
    rows->finish();
  }
  e.memory = parse_curve(obj.object("memory"), "bytes");
  if (auto router = obj.optional_object("router_topk")) e.router_topk = parse_router_topk(std::move(*router));
  if (auto tile = obj.optional_object("tile_gemm")) e.tile_gemm = parse_tile_gemm(std::move(*tile));
  e.source = obj.string("source");
  obj.finish();
  return e;
}

FabricSpec parse_fabric(JsonObject obj) {
  FabricSpec f;
  f.type = enum_value(obj, "type", try_parse_fabric_type, fabric_type_choices());
  f.link_bw_Bps = scaled(obj, "link_bw_GBps", kGBps);
  f.usable_link_bw_Bps = scaled(obj, "usable_link_bw_GBps", kGBps);
  f.links_per_gpu = count(obj, "links_per_gpu");
  f.per_gpu_bw_Bps = scaled(obj, "per_gpu_bw_GBps", kGBps);
  f.latency_s = scaled(obj, "latency_us", kUs);
  f.source = obj.string("source");
  obj.finish();
  return f;
}

NodeSpec parse_node(JsonObject obj) {
  NodeSpec n;
  n.gpus_per_node = count(obj, "gpus_per_node");
  n.fabric = parse_fabric(obj.object("fabric"));
  obj.finish();
  return n;
}

NetworkSpec parse_network(JsonObject obj) {
  NetworkSpec n;
  n.nics_per_node = count(obj, "nics_per_node");
  n.nic_bw_Bps = scaled(obj, "nic_gbps", kGbps);
  n.nic_usable_bw_Bps = scaled(obj, "nic_usable_GBps", kGBps);
  n.latency_s = scaled(obj, "latency_us", kUs);
  // Profiles from before the node count was the scenario's carry max_nodes; it limits nothing now.
  (void)obj.optional_integer("max_nodes");
  n.source = obj.string("source");
  obj.finish();
  return n;
}

CollectiveTable parse_collective(JsonObject obj) {
  CollectiveTable t;
  t.kind = enum_value(obj, "kind", try_parse_collective_kind, collective_kind_choices());
  t.scope = enum_value(obj, "scope", try_parse_collective_scope, collective_scope_choices());
  t.gpus = count(obj, "gpus");
  t.algorithm = enum_value(obj, "algorithm", try_parse_collective_algorithm, collective_algorithm_choices());
  t.step_latency_s = scaled(obj, "step_latency_us", kUs);
  for (auto point : obj.object_array("busbw")) {
    t.bytes.push_back(point.number("bytes"));
    t.busbw_Bps.push_back(scaled(point, "GBps", kGBps));
    point.finish();
  }
  t.source = obj.string("source");
  obj.finish();
  return t;
}

ContentionSpec parse_contention(JsonObject obj) {
  ContentionSpec c;
  c.comm_sms = count(obj, "comm_sms");
  c.compute_slowdown_with_comm = obj.number("compute_slowdown_with_comm");
  if (obj.has("gemm_slowdown_with_comm")) {
    for (auto point : obj.object_array("gemm_slowdown_with_comm")) {
      c.gemm_kernel_s.push_back(scaled(point, "kernel_us", kUs));
      c.gemm_slowdown.push_back(point.number("slowdown"));
      point.finish();
    }
  }
  c.comm_slowdown_with_compute = obj.number("comm_slowdown_with_compute");
  c.compute_slowdown_with_copy = obj.optional_number("compute_slowdown_with_copy").value_or(1.0);
  c.memory_slowdown_with_comm = obj.optional_number("memory_slowdown_with_comm").value_or(1.0);
  if (obj.has("hbm_interference")) {
    obj.fail("hbm_interference",
             "was replaced by hbm_bytes_per_comm_byte, hbm_bytes_per_copy_byte and comm_hbm_weight "
             "(hwprofiles/FORMAT.md)");
  }
  c.hbm_bytes_per_comm_byte = obj.number("hbm_bytes_per_comm_byte");
  c.hbm_bytes_per_copy_byte = obj.number("hbm_bytes_per_copy_byte");
  c.comm_hbm_weight = obj.number("comm_hbm_weight");
  c.source = obj.string("source");
  obj.finish();
  return c;
}

PowerSpec parse_power(JsonObject obj) {
  PowerSpec w;
  w.present = true;
  w.limit_w = obj.number("limit_w");
  w.idle_w = obj.number("idle_w");
  w.compute_w_at_peak = obj.number("compute_w_at_peak");
  w.hbm_j_per_byte = scaled(obj, "hbm_pj_per_byte", kPjPerByte);
  w.link_j_per_byte = scaled(obj, "link_pj_per_byte", kPjPerByte);
  w.speed_exponent = obj.number("speed_exponent");
  w.clock_rate_exponent = obj.number("clock_rate_exponent");
  w.source = obj.string("source");
  obj.finish();
  return w;
}

}  // namespace

HwProfile parse_profile(const nlohmann::json& document, const std::string& source_file) {
  JsonObject root(document, source_file);
  HwProfile p;
  p.source_file = source_file;
  p.schema_version = count(root, "schema_version");
  // Checked before anything else: a newer layout would otherwise fail on its first unknown key.
  if (p.schema_version != 1) root.fail("schema_version", "must be 1");
  p.name = root.string("name");
  p.description = root.string("description");
  p.provenance = parse_provenance(root.object("provenance"));
  p.gpu = parse_gpu(root.object("gpu"));
  p.efficiency = parse_efficiency(root.object("efficiency"));
  p.node = parse_node(root.object("node"));
  p.network = parse_network(root.object("network"));
  for (auto entry : root.object_array("collectives"))
    p.collectives.push_back(parse_collective(std::move(entry)));
  p.contention = parse_contention(root.object("contention"));
  if (auto power = root.optional_object("power")) p.power = parse_power(std::move(*power));
  root.finish();
  return p;
}

}  // namespace moesim::hw::detail
