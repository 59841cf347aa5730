#include "moesim/models/ParameterCount.hpp"

#include <gtest/gtest.h>

#include "moesim/models/ModelSpec.hpp"

namespace moesim::models {
namespace {

// Total parameters the model publishers state; an independent check of the numbers in the specs.
struct PublishedSize {
  const char* model;
  double total_parameters;
  const char* where;
};

const PublishedSize kPublishedSizes[] = {
    {"deepseek-v2-lite", 15.7e9, "DeepSeek-V2 paper / HF card: 15.7B total"},
    {"deepseek-v2", 236e9, "DeepSeek-V2 paper: 236B total"},
    {"deepseek-v3", 671e9, "DeepSeek-V3 report: 671B total (685B on HF incl. the MTP module)"},
    {"moonlight-16b-a3b", 16e9, "Moonlight HF card: 16B total"},
    {"qwen3-30b-a3b", 30.5e9, "Qwen3 HF card: 30.5B total"},
    {"qwen3-235b-a22b", 235e9, "Qwen3 HF card: 235B total"},
    {"llama4-scout", 109e9, "Llama 4 card: 109B total (incl. vision encoder)"},
    {"mixtral-8x7b", 46.7e9, "Mixtral paper: 46.7B total"},
    {"gpt-oss-120b", 116.83e9, "gpt-oss model card (OpenAI, 2025): 116.83B total"},
    {"gpt-oss-20b", 20.91e9, "gpt-oss model card (OpenAI, 2025): 20.91B total"},
};

TEST(ParameterCount, ShippedSpecsMatchPublishedTotalsWithin3Percent) {
  for (const PublishedSize& published : kPublishedSizes) {
    SCOPED_TRACE(std::string(published.model) + " — " + published.where);
    const double counted = static_cast<double>(total_parameters(load_model(published.model)));
    EXPECT_NEAR(counted / published.total_parameters, 1.0, 0.03) << "counted " << counted / 1e9 << "B";
  }
}

TEST(ParameterCount, MlaAttentionOfDeepSeekV2Lite) {
  // H = 2048, 16 heads, q_lora_rank 0, nope 128, rope 64, kv_lora 512, v 128:
  //   q_proj    2048 × 16·(128+64)        = 2048 × 3072  = 6,291,456
  //   kv_a      2048 × (512+64) + 512 norm = 1,179,648 + 512 = 1,180,160
  //   kv_b      512 × 16·(128+128)         = 512 × 4096   = 2,097,152
  //   o_proj    16·128 × 2048                              = 4,194,304
  //   total                                                = 13,763,072
  EXPECT_EQ(attention_parameters(load_model("deepseek-v2-lite")), 13'763'072);
}

TEST(ParameterCount, GptMoeSByHand) {
  // H = 512, vocab 50257, 6 layers, MoE at layers 1, 3, 5 (16 experts, GELU, ffn 1024), dense at 0, 2, 4.
  //   attention   4·H² = 4 · 262,144                         = 1,048,576 per layer
  //   pre-norms   2·H                                       = 1,024 per layer
  //   MLP(1024)   2 · 512 · 1024                            = 1,048,576
  //   MoE block   16 · 1,048,576 + router 512·16            = 16,785,408
  //   embeddings  2 · 50257 · 512                            = 51,463,168, final norm 512
  //   total = 51,463,168 + 512 + 6·1,049,600 + 3·16,785,408 + 3·1,048,576
  //         = 51,463,680 + 6,297,600 + 50,356,224 + 3,145,728 = 111,263,232
  EXPECT_EQ(total_parameters(load_model("gpt-moe-s")), 111'263'232);
}

}  // namespace
}  // namespace moesim::models
