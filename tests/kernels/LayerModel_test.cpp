#include "LayerModel.hpp"

#include <gtest/gtest.h>

namespace moesim::kernels::layer {
namespace {

const char* const kGqa = R"({
  "schema_version": 1, "name": "toy", "layers": 4, "hidden": 1024, "vocab": 1000,
  "attention": { "type": "gqa", "heads": 16, "kv_heads": 2, "head_dim": 64 },
  "moe": { "experts": 8, "top_k": 2, "expert_ffn": 512, "shared_experts": 1, "shared_ffn": 256 },
  "activation": "swiglu", "norm": "rmsnorm", "unknown_key": [1, 2]
})";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_layer_model(text, "toy.json");
  } catch (const ModelFileError& error) {
    return error.what();
  }
  return "";
}

TEST(LayerModelTest, ReadsShapesAndIgnoresOtherKeys) {
  const LayerModel m = parse_layer_model(kGqa, "toy.json");
  EXPECT_EQ(m.name, "toy");
  EXPECT_EQ(m.hidden, 1024);
  EXPECT_EQ(m.qkv_width(), (16 + 2 * 2) * 64);
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.shared_width(), 256);
}

TEST(LayerModelTest, RefusesMlaOtherActivationsAndNorms) {
  EXPECT_NE(error_of(replaced(kGqa, "\"gqa\"", "\"mla\"")).find("toy.json: attention.type \"mla\""),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kGqa, "\"swiglu\"", "\"gelu\"")).find("activation \"gelu\""),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kGqa, "\"rmsnorm\"", "\"layernorm\"")).find("norm must be"), std::string::npos);
}

TEST(LayerModelTest, ReportsMissingKeysBadTypesAndSyntaxWithPosition) {
  EXPECT_NE(error_of(replaced(kGqa, "\"top_k\": 2,", "")).find("missing key moe.top_k"), std::string::npos);
  EXPECT_NE(
      error_of(replaced(kGqa, "\"hidden\": 1024", "\"hidden\": \"big\"")).find("hidden must be an integer"),
      std::string::npos);
  EXPECT_NE(error_of(replaced(kGqa, "\"hidden\": 1024", "\"hidden\": 1020")).find("multiple of 8"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kGqa, "\"top_k\": 2", "\"top_k\": 9")).find("top_k exceeds"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kGqa, "\"layers\": 4,", "\"layers\": 4")).find("toy.json: line 2, column"),
            std::string::npos);
}

TEST(LayerModelTest, SlicesHeadsAndSharedExpertsOverTensorParallelRanks) {
  const LayerModel m = parse_layer_model(kGqa, "toy.json");
  const TensorSlice two = slice_for_tp(m, 2, "toy.json");
  EXPECT_EQ(two.heads, 8);
  EXPECT_EQ(two.kv_heads, 1);
  EXPECT_EQ(two.shared_width, 128);
  const TensorSlice four = slice_for_tp(m, 4, "toy.json");  // 2 KV heads over 4 ranks: replicated
  EXPECT_EQ(four.heads, 4);
  EXPECT_EQ(four.kv_heads, 1);
  EXPECT_THROW(slice_for_tp(m, 3, "toy.json"), ModelFileError);
  EXPECT_THROW(check_expert_parallel(m, 3, "toy.json"), ModelFileError);
  EXPECT_NO_THROW(check_expert_parallel(m, 4, "toy.json"));
}

TEST(LayerModelTest, ReadsTheShippedModelsTheRunnerSupports) {
  const std::string dir = MOESIM_TEST_MODELS_DIR;
  const LayerModel qwen = load_layer_model(dir + "/qwen3-30b-a3b.json");
  EXPECT_EQ(qwen.experts, 128);
  EXPECT_EQ(qwen.top_k, 8);
  const LayerModel scout = load_layer_model(dir + "/llama4-scout.json");
  EXPECT_EQ(scout.hidden, 5120);
  EXPECT_EQ(scout.shared_width(), 8192);
  EXPECT_NO_THROW(load_layer_model(dir + "/mixtral-8x7b.json"));
  EXPECT_THROW(load_layer_model(dir + "/deepseek-v3.json"), ModelFileError);  // MLA
  EXPECT_THROW(load_layer_model(dir + "/no-such-model.json"), ModelFileError);
}

}  // namespace
}  // namespace moesim::kernels::layer
