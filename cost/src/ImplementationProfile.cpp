#include "moesim/cost/ImplementationProfile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <utility>

#include "moesim/common/Check.hpp"
#include "moesim/common/DataRoot.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::cost {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSchemaVersion = 1;
constexpr const char* kKind = "moesim-implementation-profile";
constexpr const char* kFused = "fused";
// Bounds that catch unit mistakes: a step's host time or a fixed kernel under 1 s, a GEMM rate within
// 1/100..100 of the hardware profile's, traffic under 1 MiB per element.
constexpr double kMaxMicroseconds = 1e6;
constexpr double kMaxFactor = 100;
constexpr double kMaxBytesPerElement = 1 << 20;

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

constexpr NameTable<ImplPass, 2> kPassNames = {
    {{ImplPass::FORWARD, "forward"}, {ImplPass::BACKWARD, "backward"}}};
constexpr NameTable<ImplStepKind, 5> kKindNames = {{{ImplStepKind::GEMM, "gemm"},
                                                    {ImplStepKind::ATTENTION, "attention"},
                                                    {ImplStepKind::MEMORY, "memory"},
                                                    {ImplStepKind::FIXED, "fixed"},
                                                    {ImplStepKind::SYNC, "sync"}}};
constexpr NameTable<ImplRepeat, 2> kRepeatNames = {
    {{ImplRepeat::ONCE, "once"}, {ImplRepeat::PER_EXPERT, "per_expert"}}};
constexpr NameTable<ImplRows, 5> kRowsNames = {{{ImplRows::NONE, "none"},
                                                {ImplRows::TOKENS, "tokens"},
                                                {ImplRows::ROUTED_ROWS, "routed_rows"},
                                                {ImplRows::RECEIVED_ROWS, "received_rows"},
                                                {ImplRows::EXPERT_ROWS, "expert_rows"}}};
constexpr NameTable<ImplWidth, 16> kWidthNames = {{{ImplWidth::ONE, "one"},
                                                   {ImplWidth::HIDDEN, "hidden"},
                                                   {ImplWidth::EXPERTS, "experts"},
                                                   {ImplWidth::LOCAL_EXPERTS, "local_experts"},
                                                   {ImplWidth::TOP_K, "top_k"},
                                                   {ImplWidth::EXPERT_FFN, "expert_ffn"},
                                                   {ImplWidth::SHARED_FFN, "shared_ffn"},
                                                   {ImplWidth::DENSE_FFN, "dense_ffn"},
                                                   {ImplWidth::Q_WIDTH, "q_width"},
                                                   {ImplWidth::KV_WIDTH, "kv_width"},
                                                   {ImplWidth::V_WIDTH, "v_width"},
                                                   {ImplWidth::HEADS, "heads"},
                                                   {ImplWidth::EXPERT_WEIGHTS, "expert_weights"},
                                                   {ImplWidth::EXPERT_WEIGHT, "expert_weight"},
                                                   {ImplWidth::Q_ROPE, "q_rope"},
                                                   {ImplWidth::K_ROPE, "k_rope"}}};
constexpr NameTable<ImplCondition, 5> kConditionNames = {{{ImplCondition::ALWAYS, "always"},
                                                          {ImplCondition::MULTI_RANK, "ep>1"},
                                                          {ImplCondition::SINGLE_RANK, "ep==1"},
                                                          {ImplCondition::QK_NORM, "qk_norm"},
                                                          {ImplCondition::SHARED_GATE, "shared_gate"}}};
constexpr NameTable<models::AttentionType, 3> kAttentionNames = {{{models::AttentionType::MHA, "mha"},
                                                                  {models::AttentionType::GQA, "gqa"},
                                                                  {models::AttentionType::MLA, "mla"}}};
constexpr std::array<const char*, 4> kCollectiveNames = {"dispatch", "combine", "dispatch.bwd",
                                                         "combine.bwd"};

template <typename Enum, std::size_t N>
std::string name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [candidate, name] : table) {
    if (candidate == value) return name;
  }
  MOE_CHECK(false) << "enum value " << static_cast<int>(value) << " has no name";
  return {};
}

template <typename Enum, std::size_t N>
Enum read_enum(JsonObject& object, const std::string& key, const NameTable<Enum, N>& table) {
  const std::string text = object.string(key);
  std::string accepted;
  for (const auto& [value, name] : table) {
    if (text == name) return value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  }
  object.fail(key, "expected one of " + accepted);
}

template <typename Enum, std::size_t N>
Enum read_enum_or(JsonObject& object, const std::string& key, const NameTable<Enum, N>& table,
                  Enum fallback) {
  return object.has(key) ? read_enum(object, key, table) : fallback;
}

double bounded(JsonObject& object, const std::string& key, double low, double high, bool low_inclusive) {
  const double v = object.number(key);
  if (v > high || v < low || (!low_inclusive && v == low)) {
    object.fail(key, std::string("must be in ") + (low_inclusive ? "[" : "(") + std::to_string(low) + ", " +
                         std::to_string(high) + "]");
  }
  return v;
}

models::LayerOp read_op(JsonObject& object) {
  const std::string text = object.string("op");
  std::string accepted;
  for (int i = 0; i <= static_cast<int>(models::LayerOp::FINAL_NORM); ++i) {
    const auto op = static_cast<models::LayerOp>(i);
    if (models::to_string(op) == text) return op;
    accepted += (accepted.empty() ? "" : ", ") + models::to_string(op);
  }
  object.fail("op", "expected one of moesim's layer ops: " + accepted);
}

// Rules in order; every rule but the last bounds the mean rows it admits, more than the rule before, so that
// every launch finds one.
ImplGroupedGemm read_grouped(JsonObject g) {
  ImplGroupedGemm out;
  auto rules = g.object_array("row_tiles");
  if (rules.empty()) g.fail("row_tiles", "expected at least one {\"rows\": N} rule");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    JsonObject& r = rules[i];
    ImplRowTile tile;
    tile.rows = r.positive_integer("rows");
    const bool last = i + 1 == rules.size();
    if (r.has("max_mean_rows")) {
      if (last) r.fail("max_mean_rows", "the last rule must admit any launch: leave max_mean_rows out");
      tile.max_mean_rows = r.positive_integer("max_mean_rows");
      if (!out.row_tiles.empty() && tile.max_mean_rows <= out.row_tiles.back().max_mean_rows)
        r.fail("max_mean_rows", "must grow from rule to rule");
    } else if (!last) {
      r.fail("max_mean_rows", "required on every rule but the last");
    }
    r.finish();
    out.row_tiles.push_back(tile);
  }
  out.stream_bytes_per_s = bounded(g, "stream_GB_per_s", 0, 1e6, false) * 1e9;
  out.store_bytes_per_s = bounded(g, "store_GB_per_s", 0, 1e6, false) * 1e9;
  g.finish();
  return out;
}

nlohmann::json grouped_to_json(const ImplGroupedGemm& g) {
  nlohmann::json rules = nlohmann::json::array();
  for (const ImplRowTile& t : g.row_tiles) {
    nlohmann::json r = nlohmann::json::object();
    if (t.max_mean_rows > 0) r["max_mean_rows"] = t.max_mean_rows;
    r["rows"] = t.rows;
    rules.push_back(r);
  }
  return {{"row_tiles", rules},
          {"stream_GB_per_s", g.stream_bytes_per_s * 1e-9},
          {"store_GB_per_s", g.store_bytes_per_s * 1e-9}};
}

ImplStep read_step(JsonObject s, models::LayerOp op) {
  ImplStep step;
  step.kind = read_enum(s, "kind", kKindNames);
  step.repeat = read_enum_or(s, "repeat", kRepeatNames, ImplRepeat::ONCE);
  step.when = read_enum_or(s, "when", kConditionNames, ImplCondition::ALWAYS);
  if (auto label = s.optional_string("label")) step.label = *label;
  step.host_ns = bounded(s, "host_us", 0, kMaxMicroseconds, true) * 1e3;
  if (s.has("host_us_per_chunk"))
    step.host_ns_per_chunk = bounded(s, "host_us_per_chunk", 0, kMaxMicroseconds, true) * 1e3;
  switch (step.kind) {
    case ImplStepKind::GEMM:
      if (auto gemm = s.optional_string("gemm")) step.gemm = *gemm;
      if (step.gemm.empty())
        s.fail("gemm", "expected \"*\" or one of the op's GEMM names (fc1, fc2.wgrad...)");
      step.efficiency = bounded(s, "efficiency", 1 / kMaxFactor, kMaxFactor, true);
      if (s.has("kernel_overhead_us"))
        step.kernel_overhead_ns =
            bounded(s, "kernel_overhead_us", -kMaxMicroseconds, kMaxMicroseconds, true) * 1e3;
      if (auto grouped = s.optional_object("grouped")) step.grouped = read_grouped(std::move(*grouped));
      break;
    case ImplStepKind::ATTENTION:
      if (op != models::LayerOp::ATTN_CORE) s.fail("kind", "attention steps belong to attn_core only");
      step.time_factor = bounded(s, "time_factor", 1 / kMaxFactor, kMaxFactor, true);
      break;
    case ImplStepKind::MEMORY:
      step.bytes_per_element = bounded(s, "bytes_per_element", 0, kMaxBytesPerElement, false);
      if (s.has("max_GB_per_s")) step.max_bytes_per_s = bounded(s, "max_GB_per_s", 0, 1e6, false) * 1e9;
      if (s.has("floor_us")) step.floor_ns = bounded(s, "floor_us", 0, kMaxMicroseconds, false) * 1e3;
      if (s.has("atomic_adds_per_element"))
        step.atomic_adds_per_element = bounded(s, "atomic_adds_per_element", 0, kMaxBytesPerElement, false);
      if (s.has("steady_from_MB")) step.steady_bytes = bounded(s, "steady_from_MB", 0, 1e9, false) * 1e6;
      step.rows = read_enum(s, "rows", kRowsNames);
      step.width = read_enum(s, "width", kWidthNames);
      break;
    case ImplStepKind::FIXED:
      step.time_ns = bounded(s, "time_us", 0, kMaxMicroseconds, true) * 1e3;
      break;
    case ImplStepKind::SYNC:
      break;
  }
  if (step.rows == ImplRows::EXPERT_ROWS && step.repeat != ImplRepeat::PER_EXPERT)
    s.fail("rows", "expert_rows needs repeat per_expert");
  if (step.repeat == ImplRepeat::PER_EXPERT && op != models::LayerOp::ROUTED_EXPERTS)
    s.fail("repeat", "per_expert steps belong to routed_experts only");
  s.finish();
  return step;
}

ImplOpEntry read_entry(JsonObject e) {
  ImplOpEntry entry;
  entry.pointer = e.pointer();
  entry.op = read_op(e);
  entry.pass = read_enum(e, "pass", kPassNames);
  if (e.has("attention")) entry.attention = read_enum(e, "attention", kAttentionNames);
  for (JsonObject& s : e.object_array("steps")) entry.steps.push_back(read_step(std::move(s), entry.op));
  e.finish();
  return entry;
}

nlohmann::json step_to_json(const ImplStep& s) {
  nlohmann::json j = nlohmann::json::object();
  j["kind"] = name_of(kKindNames, s.kind);
  if (s.repeat != ImplRepeat::ONCE) j["repeat"] = name_of(kRepeatNames, s.repeat);
  if (s.when != ImplCondition::ALWAYS) j["when"] = name_of(kConditionNames, s.when);
  if (!s.label.empty()) j["label"] = s.label;
  switch (s.kind) {
    case ImplStepKind::GEMM:
      j["gemm"] = s.gemm;
      j["efficiency"] = s.efficiency;
      if (s.kernel_overhead_ns != 0) j["kernel_overhead_us"] = s.kernel_overhead_ns * 1e-3;
      if (s.grouped) j["grouped"] = grouped_to_json(*s.grouped);
      break;
    case ImplStepKind::ATTENTION:
      j["time_factor"] = s.time_factor;
      break;
    case ImplStepKind::MEMORY:
      j["bytes_per_element"] = s.bytes_per_element;
      if (s.max_bytes_per_s > 0) j["max_GB_per_s"] = s.max_bytes_per_s * 1e-9;
      if (s.floor_ns > 0) j["floor_us"] = s.floor_ns * 1e-3;
      if (s.atomic_adds_per_element > 0) j["atomic_adds_per_element"] = s.atomic_adds_per_element;
      if (s.steady_bytes > 0) j["steady_from_MB"] = s.steady_bytes * 1e-6;
      j["rows"] = name_of(kRowsNames, s.rows);
      j["width"] = name_of(kWidthNames, s.width);
      break;
    case ImplStepKind::FIXED:
      j["time_us"] = s.time_ns * 1e-3;
      break;
    case ImplStepKind::SYNC:
      break;
  }
  j["host_us"] = s.host_ns * 1e-3;
  if (s.host_ns_per_chunk > 0) j["host_us_per_chunk"] = s.host_ns_per_chunk * 1e-3;
  return j;
}

fs::path implementations_directory() {
  return data_root() / "cost" / "implementations";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const ImplOpEntry* ImplementationProfile::find(models::LayerOp op, ImplPass pass,
                                               models::AttentionType attention) const {
  const ImplOpEntry* any = nullptr;
  for (const ImplOpEntry& e : ops) {
    if (e.op != op || e.pass != pass) continue;
    if (e.attention == attention) return &e;
    if (!e.attention && any == nullptr) any = &e;
  }
  if (any == nullptr && base) return base->find(op, pass, attention);
  return any;
}

std::optional<double> ImplementationProfile::collective_host(const std::string& collective) const {
  auto it = collective_host_ns.find(collective);
  if (it == collective_host_ns.end()) return base ? base->collective_host(collective) : std::nullopt;
  return it->second;
}

double ImplementationProfile::graph_free_us() const {
  if (graph_free_us_per_launch > 0 || !base) return graph_free_us_per_launch;
  return base->graph_free_us();
}

ImplementationProfile fused_implementation() {
  ImplementationProfile p;
  p.name = kFused;
  p.provenance.source = "built-in";
  p.provenance.description =
      "the in-tree layer runner's kernels (models::layer_op_kernels), launched from C++";
  return p;
}

ImplementationProfile implementation_from_json(const nlohmann::json& document, const std::string& file) {
  JsonObject top(document, file);
  if (top.integer("schema_version") != kSchemaVersion)
    top.fail("schema_version", "expected " + std::to_string(kSchemaVersion));
  if (top.string("kind") != kKind) top.fail("kind", std::string("expected \"") + kKind + "\"");
  ImplementationProfile p;
  p.file = file;
  p.name = top.string("name");
  if (p.name.empty()) top.fail("name", "must not be empty");
  JsonObject prov = top.object("provenance");
  p.provenance.source = prov.string("source");
  if (p.provenance.source != "built-in" && p.provenance.source != "learned")
    prov.fail("source", "expected built-in or learned");
  p.provenance.description = prov.string("description");
  if (auto hw = prov.optional_string("hw_profile")) p.provenance.hw_profile = *hw;
  if (auto date = prov.optional_string("date")) p.provenance.date = *date;
  if (prov.has("traces")) {
    const nlohmann::json& traces = prov.raw("traces");
    if (!traces.is_array()) prov.fail("traces", "expected an array of file names");
    for (const auto& t : traces) {
      if (!t.is_string()) prov.fail("traces", "expected an array of file names");
      p.provenance.traces.push_back(t.get<std::string>());
    }
  }
  prov.finish();
  if (auto base = top.optional_string("base")) {
    // One level: a shipped profile that has no base itself (so no chain can loop).
    static thread_local bool loading_base = false;
    if (loading_base) top.fail("base", "is not allowed in a profile that is itself a base");
    if (*base == p.name || *base == kFused)
      top.fail("base", "must name another profile (fused needs no base)");
    if (fs::path(*base).has_parent_path())
      top.fail("base", "must be a shipped profile's name (eager, grouped)");
    loading_base = true;
    try {
      p.base = std::make_shared<const ImplementationProfile>(load_implementation(*base));
    } catch (...) {
      loading_base = false;
      throw;
    }
    loading_base = false;
  }
  JsonObject host = top.object("host");
  p.host_cpu = host.string("cpu_model");
  if (host.has("rank_spread")) p.rank_spread = bounded(host, "rank_spread", 0, 1, true);
  if (host.has("probe_us")) p.host_probe_us = bounded(host, "probe_us", 0, 1e6, false);
  if (host.has("graph_free_us_per_launch"))
    p.graph_free_us_per_launch = bounded(host, "graph_free_us_per_launch", 0, kMaxMicroseconds, true);
  host.finish();
  for (JsonObject& e : top.object_array("ops")) p.ops.push_back(read_entry(std::move(e)));
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (p.ops[i].op == p.ops[j].op && p.ops[i].pass == p.ops[j].pass &&
          p.ops[i].attention == p.ops[j].attention)
        throw ConfigError(file, p.ops[i].pointer, "repeats the entry at " + p.ops[j].pointer);
    }
  }
  if (top.has("collectives")) {
    JsonObject collectives = top.object("collectives");
    for (const char* name : kCollectiveNames) {
      if (!collectives.has(name)) continue;
      JsonObject c = collectives.object(name);
      p.collective_host_ns[name] = bounded(c, "host_us", 0, kMaxMicroseconds, true) * 1e3;
      c.finish();
    }
    collectives.finish();
  }
  top.finish();
  return p;
}

nlohmann::json implementation_to_json(const ImplementationProfile& p) {
  nlohmann::json j = nlohmann::json::object();
  j["schema_version"] = kSchemaVersion;
  j["kind"] = kKind;
  j["name"] = p.name;
  nlohmann::json prov = {{"source", p.provenance.source}, {"description", p.provenance.description}};
  if (!p.provenance.hw_profile.empty()) prov["hw_profile"] = p.provenance.hw_profile;
  if (!p.provenance.date.empty()) prov["date"] = p.provenance.date;
  if (!p.provenance.traces.empty()) prov["traces"] = p.provenance.traces;
  j["provenance"] = prov;
  if (p.base) j["base"] = p.base->name;
  j["host"] = {{"cpu_model", p.host_cpu}};
  if (p.rank_spread > 0) j["host"]["rank_spread"] = p.rank_spread;
  if (p.host_probe_us > 0) j["host"]["probe_us"] = p.host_probe_us;
  if (p.graph_free_us_per_launch > 0) j["host"]["graph_free_us_per_launch"] = p.graph_free_us_per_launch;
  nlohmann::json ops = nlohmann::json::array();
  for (const ImplOpEntry& e : p.ops) {
    nlohmann::json entry = {{"op", models::to_string(e.op)}, {"pass", name_of(kPassNames, e.pass)}};
    if (e.attention) entry["attention"] = name_of(kAttentionNames, *e.attention);
    nlohmann::json steps = nlohmann::json::array();
    for (const ImplStep& s : e.steps) steps.push_back(step_to_json(s));
    entry["steps"] = steps;
    ops.push_back(entry);
  }
  j["ops"] = ops;
  if (!p.collective_host_ns.empty()) {
    nlohmann::json collectives = nlohmann::json::object();
    for (const auto& [name, ns] : p.collective_host_ns) collectives[name] = {{"host_us", ns * 1e-3}};
    j["collectives"] = collectives;
  }
  return j;
}

ImplementationProfile load_implementation(const std::string& name_or_file) {
  if (name_or_file == kFused) return fused_implementation();
  if (fs::is_regular_file(name_or_file) || ends_with(name_or_file, ".json"))
    return implementation_from_json(read_json_file(name_or_file), name_or_file);
  const fs::path shipped = implementations_directory() / (name_or_file + ".json");
  if (fs::is_regular_file(shipped))
    return implementation_from_json(read_json_file(shipped.string()), shipped.string());
  std::string names;
  for (const auto& name : shipped_implementation_names()) names += (names.empty() ? "" : ", ") + name;
  throw ConfigError("", "--impl",
                    "= \"" + name_or_file +
                        "\": neither a profile file nor a shipped implementation (shipped: " + names + ")");
}

std::vector<std::string> shipped_implementation_names() {
  std::vector<std::string> names = {kFused};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(implementations_directory(), error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string to_string(ImplPass pass) {
  return name_of(kPassNames, pass);
}
std::string to_string(ImplStepKind kind) {
  return name_of(kKindNames, kind);
}
std::string to_string(ImplRepeat repeat) {
  return name_of(kRepeatNames, repeat);
}
std::string to_string(ImplRows rows) {
  return name_of(kRowsNames, rows);
}
std::string to_string(ImplWidth width) {
  return name_of(kWidthNames, width);
}

double expected_max_of_normals(int n) {
  if (n <= 1) return 0;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, midpoint rule over [-8, 8] (the tails add nothing at
  // double precision for any n a cluster has).
  constexpr int kSteps = 16000;
  constexpr double kLow = -8, kHigh = 8, kStep = (kHigh - kLow) / kSteps;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = kLow + (i + 0.5) * kStep;
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double below = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * n * density * std::pow(below, n - 1);
  }
  return sum * kStep;
}

double straggle_factor(double rank_spread, int ranks) {
  if (rank_spread <= 0) return 1;  // most profiles: skip the integral
  return 1 + rank_spread * expected_max_of_normals(ranks);
}

std::string to_string(ImplCondition when) {
  return name_of(kConditionNames, when);
}

}  // namespace moesim::cost
