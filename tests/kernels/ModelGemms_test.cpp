#include "moesim/kernels/ModelGemms.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace moesim::kernels {
namespace {

const ModelGemmCase* find(const std::vector<ModelGemmCase>& cases, std::int64_t m, std::int64_t n,
                          std::int64_t k) {
  const auto it = std::find_if(cases.begin(), cases.end(),
                               [&](const ModelGemmCase& c) { return c.m == m && c.n == n && c.k == k; });
  return it == cases.end() ? nullptr : &*it;
}

// Qwen3-30B-A3B (models/specs/qwen3-30b-a3b.json): hidden 2048, expert_ffn 768, SwiGLU, so a routed
// expert's fc1 is 2048 -> 2·768 and its fc2 768 -> 2048, timed at the expert rows only.
TEST(ModelGemmsTest, RoutedExpertsTakeTheExpertRows) {
  const auto cases = model_gemm_cases(MOESIM_MODEL_GEMM_SHAPES, {4096}, {256});
  const ModelGemmCase* fc1 = find(cases, 256, 1536, 2048);
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->name, "expert.fc1");
  EXPECT_NE(std::find(fc1->uses.begin(), fc1->uses.end(), "qwen3-30b-a3b/routed_experts.fc1"),
            fc1->uses.end());
  EXPECT_NE(find(cases, 256, 2048, 768), nullptr);
  EXPECT_EQ(find(cases, 4096, 1536, 2048), nullptr);
}

// FlashMoE's evaluation layer (hidden = expert_ffn = 2048, GELU: fc1 and fc2 are both 2048 x 2048) shares
// that product with the output projections of three models: at equal rows they are one case.
TEST(ModelGemmsTest, OneProductListsEveryModelGemmItStandsFor) {
  const auto cases = model_gemm_cases(MOESIM_MODEL_GEMM_SHAPES, {4096}, {4096});
  const ModelGemmCase* square = find(cases, 4096, 2048, 2048);
  ASSERT_NE(square, nullptr);
  EXPECT_EQ(square->name, "out_proj");  // the first model GEMM with this product names the row
  EXPECT_NE(std::find(square->uses.begin(), square->uses.end(), "flashmoe-eval/routed_experts.fc2"),
            square->uses.end());
  EXPECT_NE(std::find(square->uses.begin(), square->uses.end(), "moonlight-16b-a3b/attn_out.out_proj"),
            square->uses.end());
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_FALSE(cases[i].m == cases[j].m && cases[i].n == cases[j].n && cases[i].k == cases[j].k);
}

TEST(ModelGemmsTest, BadFileIsOneLineNamingIt) {
  EXPECT_THROW(model_gemm_cases("/nonexistent/shapes.json", {1}, {1}), std::invalid_argument);
}

}  // namespace
}  // namespace moesim::kernels
