#include "moesim/models/ModelSpec.hpp"
#include "moesim/models/ParameterCount.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"

namespace moesim::models {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kShippedModels = {
    "deepseek-v2",  "deepseek-v2-lite",  "deepseek-v3",     "flashmoe-eval", "gpt-moe-l",
    "gpt-moe-m",    "gpt-moe-s",         "gpt-oss-120b",    "gpt-oss-20b",   "llama4-scout",
    "mixtral-8x7b", "moonlight-16b-a3b", "qwen3-235b-a22b", "qwen3-30b-a3b"};

// The SPEC's example model, which every bad-input test below breaks in exactly one place.
nlohmann::json valid_document() {
  return parse_json_text(R"({
    "schema_version": 1, "name": "example", "source": "SPEC.md example",
    "layers": 27, "dense_layers": 1, "hidden": 2048, "vocab": 102400,
    "attention": { "type": "mla", "heads": 16, "kv_heads": 16, "head_dim": 128,
                   "kv_lora_rank": 512, "q_lora_rank": 0, "rope_head_dim": 64, "v_head_dim": 128 },
    "moe": { "experts": 64, "top_k": 6, "expert_ffn": 1408, "shared_experts": 2, "shared_ffn": 1408 },
    "dense_ffn": 10944, "activation": "swiglu", "norm": "rmsnorm" })",
                         "example");
}

nlohmann::json gqa_document() {
  nlohmann::json document = valid_document();
  document["attention"] = {{"type", "gqa"}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}};
  return document;
}

// what() of the ConfigError that loading `document` throws, or "" when it loads.
std::string load_error(const nlohmann::json& document) {
  try {
    model_from_json(document, "bad.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSpec, ValidDocumentLoadsEveryField) {
  const ModelSpec spec = model_from_json(valid_document(), "example.json");
  EXPECT_EQ(spec.name, "example");
  EXPECT_EQ(spec.file, "example.json");
  EXPECT_EQ(spec.layers, 27);
  EXPECT_EQ(spec.moe_every, 1);
  EXPECT_EQ(spec.attention.type, AttentionType::MLA);
  EXPECT_EQ(spec.attention.qk_head_dim(), 128 + 64);
  EXPECT_EQ(spec.attention.value_head_dim(), 128);
  EXPECT_EQ(spec.moe.shared_experts, 2);
  EXPECT_EQ(spec.activation, Activation::SWIGLU);
  EXPECT_EQ(spec.norm, NormType::RMSNORM);
}

TEST(ModelSpec, UnknownKeysAreErrorsAtEveryLevel) {
  nlohmann::json top = valid_document();
  top["moe_freq"] = 2;
  EXPECT_EQ(load_error(top), "bad.json: /moe_freq is not a known key");
  nlohmann::json nested = valid_document();
  nested["moe"]["capacity_factor"] = 1.0;
  EXPECT_EQ(load_error(nested), "bad.json: /moe/capacity_factor is not a known key");
}

TEST(ModelSpec, WrongTypesNameTheExpectedType) {
  nlohmann::json text_number = valid_document();
  text_number["hidden"] = "2048";
  EXPECT_EQ(load_error(text_number), "bad.json: /hidden = \"2048\": expected an integer");
  nlohmann::json fractional = valid_document();
  fractional["moe"]["top_k"] = 1.5;
  EXPECT_EQ(load_error(fractional), "bad.json: /moe/top_k = 1.5: expected an integer");
  nlohmann::json not_object = valid_document();
  not_object["attention"] = "mla";
  EXPECT_EQ(load_error(not_object), "bad.json: /attention = \"mla\": expected an object");
}

TEST(ModelSpec, TopKLargerThanExpertsIsRejected) {
  nlohmann::json document = valid_document();
  document["moe"]["top_k"] = 65;
  EXPECT_EQ(load_error(document), "bad.json: /moe/top_k = 65: must be <= /moe/experts (64)");
}

TEST(ModelSpec, MlaFieldOnGqaIsRejected) {
  nlohmann::json document = gqa_document();
  ASSERT_EQ(load_error(document), "");
  document["attention"]["kv_lora_rank"] = 512;
  EXPECT_EQ(load_error(document),
            "bad.json: /attention/kv_lora_rank = 512: applies only to attention type mla "
            "(for mha/gqa only heads, kv_heads, head_dim apply)");
}

TEST(ModelSpec, QkNormIsAnOptionalBoolean) {
  nlohmann::json document = gqa_document();
  EXPECT_FALSE(model_from_json(document, "m.json").attention.qk_norm);
  document["attention"]["qk_norm"] = true;
  EXPECT_TRUE(model_from_json(document, "m.json").attention.qk_norm);
  document["attention"]["qk_norm"] = "yes";
  EXPECT_EQ(load_error(document), "bad.json: /attention/qk_norm = \"yes\": expected true or false");
  EXPECT_TRUE(load_model("qwen3-30b-a3b").attention.qk_norm);  // HF Qwen3MoeAttention's q_norm, k_norm
  EXPECT_FALSE(load_model("mixtral-8x7b").attention.qk_norm);
}

TEST(ModelSpec, AttentionWindowAndItsLayers) {
  nlohmann::json document = gqa_document();
  const ModelSpec plain = model_from_json(document, "m.json");
  EXPECT_EQ(plain.attention.window, AttentionWindow::FULL);
  EXPECT_FALSE(plain.attention.windowed_layer(0));
  document["attention"]["window"] = {{"kind", "sliding"}, {"tokens", 128}, {"full_every", 2}};
  const ModelSpec alternating = model_from_json(document, "m.json");
  EXPECT_EQ(alternating.attention.window, AttentionWindow::SLIDING);
  EXPECT_EQ(alternating.attention.window_tokens, 128);
  // GPT-OSS's layer_types: sliding_attention at even 0-based layers, full_attention at odd ones.
  EXPECT_TRUE(alternating.attention.windowed_layer(0));
  EXPECT_FALSE(alternating.attention.windowed_layer(1));
  EXPECT_TRUE(alternating.attention.windowed_layer(2));
  document["attention"]["window"] = {{"kind", "chunked"}, {"tokens", 8192}};
  const ModelSpec every = model_from_json(document, "m.json");
  EXPECT_EQ(every.attention.window, AttentionWindow::CHUNKED);
  EXPECT_TRUE(every.attention.windowed_layer(3));
  // Llama 4: (layer_idx + 1) % 4 != 0 uses chunked attention (the RoPE layers); 3, 7, ... attend in full.
  const AttentionSpec& scout = load_model("llama4-scout").attention;
  EXPECT_EQ(scout.window, AttentionWindow::CHUNKED);
  EXPECT_TRUE(scout.windowed_layer(2));
  EXPECT_FALSE(scout.windowed_layer(3));
  EXPECT_TRUE(scout.windowed_layer(4));

  document["attention"]["window"] = {{"kind", "local"}, {"tokens", 128}};
  EXPECT_EQ(load_error(document),
            "bad.json: /attention/window/kind = \"local\": must be one of sliding, chunked");
  document["attention"]["window"] = {{"kind", "sliding"}, {"tokens", 0}};
  EXPECT_EQ(load_error(document), "bad.json: /attention/window/tokens = 0: must be a positive integer");
  document["attention"]["window"] = {{"kind", "sliding"}, {"tokens", 64}, {"full_every", 1}};
  EXPECT_EQ(
      load_error(document),
      "bad.json: /attention/window/full_every = 1: 1 would make every layer full: leave the window out");
  document["attention"]["window"] = {{"kind", "sliding"}, {"tokens", 64}, {"size", 1}};
  EXPECT_EQ(load_error(document), "bad.json: /attention/window/size is not a known key");
}

// Qwen2-MoE's shared_expert_gate: sigmoid(x w^T) scales the shared experts' output, w [1, hidden].
TEST(ModelSpec, SharedGateIsAnOptionalBooleanOfModelsWithSharedExperts) {
  nlohmann::json document = valid_document();  // two shared experts
  const ModelSpec plain = model_from_json(document, "m.json");
  EXPECT_FALSE(plain.moe.shared_gate);
  document["moe"]["shared_gate"] = true;
  const ModelSpec gated = model_from_json(document, "m.json");
  EXPECT_TRUE(gated.moe.shared_gate);
  // one 1-wide projection of the hidden state per MoE layer
  EXPECT_EQ(total_parameters(gated) - total_parameters(plain),
            std::int64_t{gated.hidden} * gated.moe_layer_count());
  document["moe"]["shared_gate"] = 1;
  EXPECT_EQ(load_error(document), "bad.json: /moe/shared_gate = 1: expected true or false");
  document["moe"]["shared_gate"] = true;
  document["moe"]["shared_experts"] = 0;
  EXPECT_EQ(load_error(document),
            "bad.json: /moe/shared_gate = true: gates shared experts: needs /moe/shared_experts > 0");
  EXPECT_FALSE(load_model("deepseek-v2-lite").moe.shared_gate);
}

TEST(ModelSpec, MlaFieldsAreRequiredForMla) {
  nlohmann::json document = valid_document();
  document["attention"].erase("v_head_dim");
  EXPECT_EQ(load_error(document), "bad.json: /attention/v_head_dim is missing (required)");
}

TEST(ModelSpec, AttentionShapeRules) {
  nlohmann::json type = valid_document();
  type["attention"]["type"] = "mqa";
  EXPECT_EQ(load_error(type), "bad.json: /attention/type = \"mqa\": must be one of mha, gqa, mla");
  nlohmann::json groups = gqa_document();
  groups["attention"]["kv_heads"] = 5;
  EXPECT_EQ(load_error(groups), "bad.json: /attention/kv_heads = 5: must divide /attention/heads (32)");
  nlohmann::json mha = gqa_document();
  mha["attention"]["type"] = "mha";
  EXPECT_EQ(
      load_error(mha),
      "bad.json: /attention/kv_heads = 8: must equal /attention/heads (32) for mha and mla (use gqa for "
      "shared kv heads)");
}

TEST(ModelSpec, SizesMustBePositive) {
  nlohmann::json experts = valid_document();
  experts["moe"]["experts"] = 0;
  EXPECT_EQ(load_error(experts), "bad.json: /moe/experts = 0: must be a positive integer");
  nlohmann::json layers = valid_document();
  layers["layers"] = -3;
  EXPECT_EQ(load_error(layers), "bad.json: /layers = -3: must be a positive integer");
  nlohmann::json shared = valid_document();
  shared["moe"]["shared_experts"] = -1;
  EXPECT_EQ(load_error(shared), "bad.json: /moe/shared_experts = -1: must be an integer >= 0");
  nlohmann::json shared_width = valid_document();
  shared_width["moe"]["shared_ffn"] = 0;
  EXPECT_EQ(load_error(shared_width),
            "bad.json: /moe/shared_ffn = 0: must be > 0 when /moe/shared_experts > 0");
}

TEST(ModelSpec, DenseFfnIsRequiredOnlyWhenTheModelHasDenseLayers) {
  nlohmann::json with_dense = valid_document();
  with_dense["dense_ffn"] = 0;
  EXPECT_EQ(load_error(with_dense),
            "bad.json: /dense_ffn = 0: must be > 0: the model has dense layers (/dense_layers > 0 or "
            "/moe_every > 1)");
  nlohmann::json all_moe = with_dense;
  all_moe["dense_layers"] = 0;
  EXPECT_EQ(load_error(all_moe), "");
  nlohmann::json interleaved = all_moe;
  interleaved["moe_every"] = 2;
  EXPECT_EQ(load_error(interleaved),
            "bad.json: /dense_ffn = 0: must be > 0: the model has dense layers (/dense_layers > 0 or "
            "/moe_every > 1)");
}

TEST(ModelSpec, LayerLayoutMustLeaveAnMoeLayer) {
  nlohmann::json dense = valid_document();
  dense["dense_layers"] = 27;
  EXPECT_EQ(load_error(dense), "bad.json: /dense_layers = 27: must be < /layers (27): no MoE layer left");
  nlohmann::json sparse = valid_document();
  sparse["moe_every"] = 30;
  EXPECT_EQ(load_error(sparse),
            "bad.json: /moe_every = 30: must be <= /layers - /dense_layers (26): no MoE layer left");
}

TEST(ModelSpec, SchemaVersionMustBeOne) {
  nlohmann::json document = valid_document();
  document["schema_version"] = 2;
  EXPECT_EQ(load_error(document), "bad.json: /schema_version = 2: must be 1 (the version this moesim reads)");
  document.erase("schema_version");
  EXPECT_EQ(load_error(document), "bad.json: /schema_version is missing (required)");
}

TEST(ModelSpec, MoeLayersFollowTheDenseLayersAndMoeEvery) {
  const ModelSpec v3 = load_model("deepseek-v3");
  EXPECT_FALSE(v3.is_moe_layer(0));
  EXPECT_FALSE(v3.is_moe_layer(2));
  EXPECT_TRUE(v3.is_moe_layer(3));
  EXPECT_TRUE(v3.is_moe_layer(60));
  EXPECT_EQ(v3.moe_layer_count(), 58);
  // GPT-MoE-L, 12 layers, MoE every other layer: dense, MoE, dense, MoE, ... → layers 1, 3, ..., 11.
  const ModelSpec gpt = load_model("gpt-moe-l");
  std::vector<int> moe_layers;
  for (int layer = 0; layer < gpt.layers; ++layer) {
    if (gpt.is_moe_layer(layer)) moe_layers.push_back(layer);
  }
  EXPECT_EQ(moe_layers, (std::vector<int>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(gpt.moe_layer_count(), 6);
}

TEST(ModelSpec, ShippedNamesAreTheSpecFiles) {
  EXPECT_EQ(shipped_model_names(), kShippedModels);
}

TEST(ModelSpec, EveryShippedSpecLoadsUnderItsFileName) {
  for (const std::string& name : kShippedModels) {
    SCOPED_TRACE(name);
    const ModelSpec spec = load_model(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_EQ(fs::path(spec.file).filename(), name + ".json");
    EXPECT_FALSE(spec.source.empty());
    EXPECT_GE(spec.moe_layer_count(), 1);
  }
}

TEST(ModelSpec, LoadModelAcceptsAPath) {
  const std::string path = std::string(MOESIM_TEST_DATA_DIR) + "/models/specs/mixtral-8x7b.json";
  EXPECT_EQ(load_model(path).name, "mixtral-8x7b");
}

TEST(ModelSpec, UnknownNameListsTheShippedModels) {
  std::string names;
  for (const auto& name : kShippedModels) names += (names.empty() ? "" : ", ") + name;
  try {
    load_model("mixtral-8x22b");
    FAIL() << "unknown model accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "<input>: --model = \"mixtral-8x22b\": neither a spec file nor a shipped model (shipped: " +
                  names + ")");
  }
}

TEST(ModelSpec, FileErrorsNameTheFile) {
  const std::string path = std::string(MOESIM_MODELS_FIXTURES) + "/bad_top_k.json";
  try {
    load_model(path);
    FAIL() << "top_k 9 of 8 accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": /moe/top_k = 9: must be <= /moe/experts (8)");
    EXPECT_EQ(e.file(), path);
  }
  EXPECT_THROW(load_model("no/such/model.json"), ConfigError);
}

TEST(ModelSpec, DataDirFromTheEnvironmentOverridesTheBuiltInOne) {
  const fs::path root = fs::temp_directory_path() / "moesim_models_test_data_dir";
  fs::create_directories(root / "models" / "specs");
  std::ofstream(root / "models" / "specs" / "only-model.json") << valid_document().dump();
  ASSERT_EQ(setenv("MOESIM_DATA_DIR", root.c_str(), 1), 0);
  const std::vector<std::string> names = shipped_model_names();
  const std::string loaded = load_model("only-model").name;
  unsetenv("MOESIM_DATA_DIR");
  fs::remove_all(root);
  EXPECT_EQ(names, std::vector<std::string>{"only-model"});
  EXPECT_EQ(loaded, "example");
}

TEST(ModelSpec, EnumSpellingsMatchTheFileFormat) {
  EXPECT_EQ(to_string(AttentionType::GQA), "gqa");
  EXPECT_EQ(to_string(Activation::GELU), "gelu");
  EXPECT_EQ(to_string(NormType::LAYERNORM), "layernorm");
}

}  // namespace
}  // namespace moesim::models
