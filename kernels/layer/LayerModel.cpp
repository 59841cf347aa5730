#include "LayerModel.hpp"

#include <fstream>
#include <sstream>

#include "moesim/kernels/Json.hpp"

namespace moesim::kernels::layer {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw ModelFileError(path + ": " + problem);
}

const Json& member(const Json& object, const std::string& key, const std::string& where,
                   const std::string& path) {
  const auto it = object.find(key);
  if (it == object.end()) bad(path, "missing key " + where + key);
  return *it;
}

std::int64_t count(const Json& object, const std::string& key, const std::string& where,
                   const std::string& path, std::int64_t min_value) {
  const Json& value = member(object, key, where, path);
  // As moesim's model loader: 2048.0 is a number, not a count.
  if (!value.is_number_integer()) bad(path, where + key + " must be an integer, not " + value.type_name());
  const auto n = value.get<std::int64_t>();
  if (n < min_value)
    bad(path, where + key + " = " + std::to_string(n) + ": must be >= " + std::to_string(min_value));
  return n;
}

std::string text_of(const Json& object, const std::string& key, const std::string& where,
                    const std::string& path) {
  const Json& value = member(object, key, where, path);
  if (!value.is_string()) bad(path, where + key + " must be a string, not " + value.type_name());
  return value.get<std::string>();
}

const Json& section(const Json& root, const std::string& key, const std::string& path) {
  const Json& value = member(root, key, "", path);
  if (!value.is_object()) bad(path, key + " must be an object");
  return value;
}

// The kernels move rows as 16-byte vectors of 8 bf16 values.
void require_multiple_of_8(std::int64_t value, const std::string& what, const std::string& path) {
  if (value % 8 != 0) bad(path, what + " = " + std::to_string(value) + ": must be a multiple of 8");
}

void validate(const LayerModel& m, const std::string& path) {
  require_multiple_of_8(m.hidden, "hidden", path);
  require_multiple_of_8(m.head_dim, "attention.head_dim", path);
  require_multiple_of_8(m.expert_ffn, "moe.expert_ffn", path);
  if (m.shared_experts > 0) require_multiple_of_8(m.shared_ffn, "moe.shared_ffn", path);
  if (m.heads % m.kv_heads != 0) bad(path, "attention.heads must be a multiple of attention.kv_heads");
  if (m.top_k > m.experts) bad(path, "moe.top_k exceeds moe.experts");
  if (m.experts > kMaxExperts)
    bad(path, "moe.experts = " + std::to_string(m.experts) + ": the runner's gate supports at most " +
                  std::to_string(kMaxExperts));
}

}  // namespace

LayerModel parse_layer_model(const std::string& text, const std::string& path) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& error) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: ..."
    const std::string what = error.what();
    const std::size_t at = what.find("line ");
    bad(path, at == std::string::npos ? what : what.substr(at));
  }
  if (!root.is_object()) bad(path, "the top level must be an object");
  LayerModel m;
  m.name = text_of(root, "name", "", path);
  m.hidden = count(root, "hidden", "", path, 8);
  const Json& attention = section(root, "attention", path);
  const std::string type = text_of(attention, "type", "attention.", path);
  if (type == "mla") bad(path, "attention.type \"mla\" is not supported by the layer runner (GQA/MHA only)");
  m.heads = count(attention, "heads", "attention.", path, 1);
  m.kv_heads = count(attention, "kv_heads", "attention.", path, 1);
  m.head_dim = count(attention, "head_dim", "attention.", path, 8);
  const Json& moe = section(root, "moe", path);
  m.experts = count(moe, "experts", "moe.", path, 1);
  m.top_k = count(moe, "top_k", "moe.", path, 1);
  m.expert_ffn = count(moe, "expert_ffn", "moe.", path, 8);
  m.shared_experts = count(moe, "shared_experts", "moe.", path, 0);
  m.shared_ffn = moe.contains("shared_ffn") ? count(moe, "shared_ffn", "moe.", path, 0) : 0;
  const std::string activation = text_of(root, "activation", "", path);
  if (activation != "swiglu")
    bad(path, "activation \"" + activation + "\" is not supported by the layer runner (swiglu only)");
  const auto norm = root.find("norm");
  if (norm != root.end() && (!norm->is_string() || norm->get<std::string>() != "rmsnorm"))
    bad(path, "norm must be \"rmsnorm\" (the only norm the layer runner has)");
  validate(m, path);
  return m;
}

LayerModel load_layer_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open the model file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_layer_model(text.str(), path);
}

TensorSlice slice_for_tp(const LayerModel& model, int tp, const std::string& path) {
  const std::string ranks = std::to_string(tp);
  if (model.heads % tp != 0) bad(path, "attention.heads is not divisible by the " + ranks + " TP ranks");
  TensorSlice slice;
  slice.heads = model.heads / tp;
  if (model.kv_heads >= tp) {
    if (model.kv_heads % tp != 0)
      bad(path, "attention.kv_heads is not divisible by the " + ranks + " TP ranks");
    slice.kv_heads = model.kv_heads / tp;
  } else {
    slice.kv_heads = 1;  // vLLM replicates KV heads when there are fewer than TP ranks
  }
  if (slice.heads % slice.kv_heads != 0)
    bad(path, "query heads per rank are not a multiple of KV heads per rank");
  if (model.shared_width() % tp != 0 || (model.shared_width() / tp) % 8 != 0)
    bad(path, "shared expert width " + std::to_string(model.shared_width()) + " does not split into " +
                  ranks + " multiples of 8");
  slice.shared_width = model.shared_width() / tp;
  return slice;
}

void check_expert_parallel(const LayerModel& model, int ep, const std::string& path) {
  if (model.experts % ep != 0)
    bad(path,
        "moe.experts = " + std::to_string(model.experts) + " is not divisible by EP " + std::to_string(ep));
}

}  // namespace moesim::kernels::layer
