#include "moesim/models/ModelSpec.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "moesim/common/Check.hpp"
#include "moesim/common/DataRoot.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::models {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSchemaVersion = 1;
// Limits (docs/limits.md): far beyond any released model (widths <= 2^17, 256 experts, 128 layers), yet
// small enough that products of dimensions fit int64 and per-layer and per-expert arrays fit in memory.
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLayers = 10000;
constexpr std::int64_t kMaxExperts = 65536;
constexpr std::int64_t kMaxHeads = 65536;

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

constexpr NameTable<AttentionType, 3> kAttentionNames = {
    {{AttentionType::MHA, "mha"}, {AttentionType::GQA, "gqa"}, {AttentionType::MLA, "mla"}}};
constexpr NameTable<AttentionWindow, 2> kWindowNames = {
    {{AttentionWindow::SLIDING, "sliding"}, {AttentionWindow::CHUNKED, "chunked"}}};
constexpr NameTable<Activation, 2> kActivationNames = {
    {{Activation::SWIGLU, "swiglu"}, {Activation::GELU, "gelu"}}};
constexpr NameTable<NormType, 2> kNormNames = {
    {{NormType::RMSNORM, "rmsnorm"}, {NormType::LAYERNORM, "layernorm"}}};

// The attention keys that only MLA reads; SPEC: "for mha/gqa only heads, kv_heads, head_dim apply".
constexpr std::array<const char*, 4> kMlaOnlyKeys = {"kv_lora_rank", "q_lora_rank", "rope_head_dim",
                                                     "v_head_dim"};

template <typename Enum, std::size_t N>
std::string enum_name(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [candidate, name] : table) {
    if (candidate == value) return name;
  }
  MOE_CHECK(false) << "enum value " << static_cast<int>(value) << " has no name";
  return {};
}

template <typename Enum, std::size_t N>
Enum read_enum(JsonObject& object, const std::string& key, const NameTable<Enum, N>& table) {
  std::string text = object.string(key);
  std::string accepted;
  for (const auto& [value, name] : table) {
    if (text == name) return value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  }
  object.fail(key, "must be one of " + accepted);
}

int read_dimension(JsonObject& object, const std::string& key, std::int64_t minimum, std::int64_t maximum) {
  std::int64_t value = object.integer(key);
  if (value < minimum) {
    object.fail(key, minimum == 1 ? "must be a positive integer" : "must be an integer >= 0");
  }
  if (value > maximum) object.fail(key, "must be <= " + std::to_string(maximum) + " (docs/limits.md)");
  return static_cast<int>(value);
}

int positive_int(JsonObject& object, const std::string& key, std::int64_t maximum = kMaxDimension) {
  return read_dimension(object, key, 1, maximum);
}
int non_negative_int(JsonObject& object, const std::string& key, std::int64_t maximum = kMaxDimension) {
  return read_dimension(object, key, 0, maximum);
}

std::string non_empty_string(JsonObject& object, const std::string& key) {
  std::string text = object.string(key);
  if (text.empty()) object.fail(key, "must not be empty");
  return text;
}

void read_window(JsonObject object, AttentionSpec& attention) {
  attention.window = read_enum(object, "kind", kWindowNames);
  attention.window_tokens = positive_int(object, "tokens");
  if (object.has("full_every")) attention.full_every = non_negative_int(object, "full_every", kMaxLayers);
  if (attention.full_every == 1)
    object.fail("full_every", "1 would make every layer full: leave the window out");
  object.finish();
}

void read_mla_fields(JsonObject& object, AttentionSpec& attention) {
  attention.kv_lora_rank = positive_int(object, "kv_lora_rank");
  attention.q_lora_rank = non_negative_int(object, "q_lora_rank");
  attention.rope_head_dim = positive_int(object, "rope_head_dim");
  attention.v_head_dim = positive_int(object, "v_head_dim");
}

AttentionSpec read_attention(JsonObject object) {
  AttentionSpec attention;
  attention.type = read_enum(object, "type", kAttentionNames);
  attention.heads = positive_int(object, "heads", kMaxHeads);
  attention.kv_heads = positive_int(object, "kv_heads", kMaxHeads);
  attention.head_dim = positive_int(object, "head_dim");
  attention.qk_norm = object.optional_boolean("qk_norm").value_or(false);
  if (auto window = object.optional_object("window")) read_window(std::move(*window), attention);
  if (attention.type == AttentionType::MLA) {
    read_mla_fields(object, attention);
  } else {
    for (const char* key : kMlaOnlyKeys) {
      if (object.has(key)) {
        object.fail(key,
                    "applies only to attention type mla (for mha/gqa only heads, kv_heads, head_dim apply)");
      }
    }
  }
  const std::string heads_text = object.child_pointer("heads") + " (" + std::to_string(attention.heads) + ")";
  if (attention.heads % attention.kv_heads != 0) object.fail("kv_heads", "must divide " + heads_text);
  if (attention.type != AttentionType::GQA && attention.kv_heads != attention.heads) {
    object.fail("kv_heads", "must equal " + heads_text + " for mha and mla (use gqa for shared kv heads)");
  }
  object.finish();
  return attention;
}

MoeSpec read_moe(JsonObject object) {
  MoeSpec moe;
  moe.experts = positive_int(object, "experts", kMaxExperts);
  moe.top_k = positive_int(object, "top_k", kMaxExperts);
  if (moe.top_k > moe.experts) {
    object.fail("top_k",
                "must be <= " + object.child_pointer("experts") + " (" + std::to_string(moe.experts) + ")");
  }
  moe.expert_ffn = positive_int(object, "expert_ffn");
  moe.shared_experts = non_negative_int(object, "shared_experts", kMaxExperts);
  moe.shared_ffn = non_negative_int(object, "shared_ffn");
  if (moe.shared_experts > 0 && moe.shared_ffn == 0) {
    object.fail("shared_ffn", "must be > 0 when " + object.child_pointer("shared_experts") + " > 0");
  }
  moe.shared_gate = object.optional_boolean("shared_gate").value_or(false);
  if (moe.shared_gate && moe.shared_experts == 0)
    object.fail("shared_gate",
                "gates shared experts: needs " + object.child_pointer("shared_experts") + " > 0");
  object.finish();
  return moe;
}

// Rules that tie top-level fields together; run after every field has been read and range-checked.
void check_layer_layout(JsonObject& object, const ModelSpec& spec) {
  if (spec.dense_layers >= spec.layers) {
    object.fail("dense_layers", "must be < /layers (" + std::to_string(spec.layers) + "): no MoE layer left");
  }
  if (spec.moe_layer_count() == 0) {
    object.fail("moe_every", "must be <= /layers - /dense_layers (" +
                                 std::to_string(spec.layers - spec.dense_layers) + "): no MoE layer left");
  }
  const bool has_dense_layer = spec.moe_layer_count() < spec.layers;
  if (has_dense_layer && spec.dense_ffn == 0) {
    object.fail("dense_ffn", "must be > 0: the model has dense layers (/dense_layers > 0 or /moe_every > 1)");
  }
}

}  // namespace

int AttentionSpec::qk_head_dim() const {
  return type == AttentionType::MLA ? head_dim + rope_head_dim : head_dim;
}

bool AttentionSpec::windowed_layer(int layer) const {
  if (window == AttentionWindow::FULL) return false;
  return full_every == 0 || (layer + 1) % full_every != 0;
}

int AttentionSpec::value_head_dim() const {
  return type == AttentionType::MLA ? v_head_dim : head_dim;
}

bool ModelSpec::is_moe_layer(int layer) const {
  MOE_CHECK(layer >= 0 && layer < layers) << "layer " << layer << " outside [0, " << layers << ")";
  if (layer < dense_layers) return false;
  return (layer - dense_layers) % moe_every == moe_every - 1;
}

int ModelSpec::moe_layer_count() const {
  return (layers - dense_layers) / moe_every;
}

ModelSpec model_from_json(const nlohmann::json& document, const std::string& file) {
  JsonObject object(document, file);
  if (object.integer("schema_version") != kSchemaVersion) {
    object.fail("schema_version",
                "must be " + std::to_string(kSchemaVersion) + " (the version this moesim reads)");
  }
  ModelSpec spec;
  spec.file = file;
  spec.name = non_empty_string(object, "name");
  spec.source = non_empty_string(object, "source");
  spec.layers = positive_int(object, "layers", kMaxLayers);
  spec.dense_layers = non_negative_int(object, "dense_layers", kMaxLayers);
  spec.moe_every = object.has("moe_every") ? positive_int(object, "moe_every", kMaxLayers) : 1;
  spec.hidden = positive_int(object, "hidden");
  spec.vocab = positive_int(object, "vocab");
  spec.attention = read_attention(object.object("attention"));
  spec.moe = read_moe(object.object("moe"));
  spec.dense_ffn = non_negative_int(object, "dense_ffn");
  spec.activation = read_enum(object, "activation", kActivationNames);
  spec.norm = read_enum(object, "norm", kNormNames);
  check_layer_layout(object, spec);
  object.finish();
  return spec;
}

ModelSpec load_model_file(const std::string& path) {
  return model_from_json(read_json_file(path), path);
}

namespace {

fs::path specs_directory() {
  return data_root() / "models" / "specs";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ModelSpec load_model(const std::string& name_or_path) {
  // Anything that exists but a folder is read as a file, so that a FIFO or a device gets its own error.
  std::error_code ignored;
  if ((fs::exists(name_or_path, ignored) && !fs::is_directory(name_or_path, ignored)) ||
      ends_with(name_or_path, ".json"))
    return load_model_file(name_or_path);
  fs::path shipped = specs_directory() / (name_or_path + ".json");
  if (fs::is_regular_file(shipped)) return load_model_file(shipped.string());
  std::string names;
  for (const auto& name : shipped_model_names()) names += (names.empty() ? "" : ", ") + name;
  throw ConfigError(
      "", "--model",
      "= \"" + name_or_path + "\": neither a spec file nor a shipped model (shipped: " + names + ")");
}

std::vector<std::string> shipped_model_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(specs_directory(), error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string to_string(AttentionType type) {
  return enum_name(kAttentionNames, type);
}
std::string to_string(Activation activation) {
  return enum_name(kActivationNames, activation);
}
std::string to_string(NormType norm) {
  return enum_name(kNormNames, norm);
}

}  // namespace moesim::models
