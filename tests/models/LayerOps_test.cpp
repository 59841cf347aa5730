#include "moesim/models/LayerOps.hpp"

#include <gtest/gtest.h>

#include "moesim/common/Error.hpp"

namespace moesim::models {
namespace {

const ModelSpec& mixtral() {
  static const ModelSpec spec = load_model("mixtral-8x7b");
  return spec;
}
const ModelSpec& v2_lite() {
  static const ModelSpec spec = load_model("deepseek-v2-lite");
  return spec;
}

OpContext tokens_context(std::int64_t tokens) {
  OpContext context;
  context.tokens = tokens;
  return context;
}

std::vector<std::string> names(const std::vector<KernelCost>& kernels) {
  std::vector<std::string> out;
  for (const auto& kernel : kernels) out.push_back(kernel.name);
  return out;
}

double total_flops(const std::vector<KernelCost>& kernels) {
  double sum = 0;
  for (const auto& kernel : kernels) sum += kernel.flops;
  return sum;
}

TEST(LayerOps, GqaQkvProjectionOfMixtral) {
  // T = 4096 tokens, H = 4096, 32 query heads + 2·8 kv heads of 128 → n = 48·128 = 6144.
  //   flops = 2·4096·6144·4096 = 206,158,430,208
  //   bytes = (4096·4096 + 4096·6144 + 4096·6144)·2 = 4096·16384·2 = 134,217,728
  //   rope: (32 + 8)·128 = 5120 values per token, read + write: 4096·5120·2 B·2 = 83,886,080
  const auto kernels = layer_op_kernels(mixtral(), LayerOp::ATTN_QKV, Pass::FORWARD, tokens_context(4096));
  ASSERT_EQ(names(kernels), (std::vector<std::string>{"attn_qkv.qkv_proj", "attn_qkv.rope"}));
  EXPECT_EQ(kernels[0].kind, KernelClass::GEMM);
  EXPECT_DOUBLE_EQ(kernels[0].flops, 206'158'430'208.0);
  EXPECT_DOUBLE_EQ(kernels[0].bytes, 134'217'728.0);
  EXPECT_EQ(kernels[0].gemm.n, 6144);
  EXPECT_DOUBLE_EQ(kernels[1].bytes, 83'886'080.0);
  // TP 8: 4 query heads and 1 kv head per rank → n = (4 + 2)·128 = 768: 2·4096·768·4096 = 25,769,803,776.
  OpContext split = tokens_context(4096);
  split.tp = 8;
  EXPECT_DOUBLE_EQ(layer_op_kernels(mixtral(), LayerOp::ATTN_QKV, Pass::FORWARD, split)[0].flops,
                   25'769'803'776.0);
}

TEST(LayerOps, MlaProjectionsWithoutQueryLatent) {
  // DeepSeek-V2-Lite, T = 1024, H = 2048, 16 heads, nope 128, rope 64, kv_lora 512, v 128:
  //   q_proj    n = 16·192 = 3072, k = 2048: 2·1024·3072·2048 = 12,884,901,888
  //   kv_a      n = 512 + 64 = 576, k = 2048: 2·1024·576·2048 = 2,415,919,104
  //   kv_a_norm 1024·512 values, read + write, 2 B: 2,097,152 bytes
  //   kv_b      n = 16·(128+128) = 4096, k = 512: 2·1024·4096·512 = 4,294,967,296
  //   rope      (16 query heads + 1 shared key)·64 = 1088 per token: 1024·1088·2·2 = 4,456,448 bytes
  const auto kernels = layer_op_kernels(v2_lite(), LayerOp::ATTN_QKV, Pass::FORWARD, tokens_context(1024));
  ASSERT_EQ(names(kernels),
            (std::vector<std::string>{"attn_qkv.q_proj", "attn_qkv.kv_a_proj", "attn_qkv.kv_a_norm",
                                      "attn_qkv.kv_b_proj", "attn_qkv.rope"}));
  EXPECT_DOUBLE_EQ(kernels[0].flops, 12'884'901'888.0);
  EXPECT_DOUBLE_EQ(kernels[1].flops, 2'415'919'104.0);
  EXPECT_DOUBLE_EQ(kernels[2].bytes, 2'097'152.0);
  EXPECT_DOUBLE_EQ(kernels[3].flops, 4'294'967'296.0);
  EXPECT_DOUBLE_EQ(kernels[4].bytes, 4'456'448.0);
}

TEST(LayerOps, MlaProjectionsWithQueryLatent) {
  // DeepSeek-V3, one token, H = 7168, q_lora 1536, 128 heads of 128 + 64:
  //   q_a  2·1·1536·7168           = 22,020,096
  //   q_b  2·1·(128·192)·1536      = 2·24576·1536 = 75,497,472
  const auto kernels =
      layer_op_kernels(load_model("deepseek-v3"), LayerOp::ATTN_QKV, Pass::FORWARD, tokens_context(1));
  ASSERT_EQ(kernels.size(), 7u);  // q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b, rope
  EXPECT_EQ(kernels[0].name, "attn_qkv.q_a_proj");
  EXPECT_DOUBLE_EQ(kernels[0].flops, 22'020'096.0);
  EXPECT_EQ(kernels[2].name, "attn_qkv.q_b_proj");
  EXPECT_DOUBLE_EQ(kernels[2].flops, 75'497'472.0);
}

TEST(LayerOps, CausalAttentionCore) {
  // Mixtral, T = 8192 as 2 sequences of s = 4096, 32 heads, d_qk = d_v = 128:
  //   2·s²·heads·(d_qk + d_v)·(1/2 causal)·sequences = 2·16,777,216·32·256·0.5·2 = 274,877,906,944
  //   backward (FlashAttention-2 convention) 2.5× = 687,194,767,360
  OpContext context = tokens_context(8192);
  context.seq_len = 4096;
  const auto forward = layer_op_kernels(mixtral(), LayerOp::ATTN_CORE, Pass::FORWARD, context);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].kind, KernelClass::ATTENTION);
  EXPECT_DOUBLE_EQ(forward[0].flops, 274'877'906'944.0);
  EXPECT_EQ(forward[0].attn_seq, 4096);
  EXPECT_EQ(forward[0].attn_head_dim, 128);
  const auto backward = layer_op_kernels(mixtral(), LayerOp::ATTN_CORE, Pass::DGRAD, context);
  ASSERT_EQ(names(backward),
            (std::vector<std::string>{"attn_core.flash_bwd_preprocess.dgrad", "attn_core.flash_bwd.dgrad",
                                      "attn_core.flash_bwd_convert_dq.dgrad"}));
  EXPECT_DOUBLE_EQ(total_flops(backward), 687'194'767'360.0);
  EXPECT_TRUE(layer_op_kernels(mixtral(), LayerOp::ATTN_CORE, Pass::WGRAD, context).empty());
}

TEST(LayerOps, ScorePairsThroughAWindow) {
  // Query-key pairs as areas, the diagonal square counted half. Sliding window 4 over 10 queries: the first
  // 4 queries a triangle 4²/2 = 8, each of the other 6 a full window of 4: 8 + 24 = 32 (full: 10²/2 = 50).
  EXPECT_DOUBLE_EQ(attention_score_pairs(10, 0, AttentionWindow::SLIDING, 4), 32.0);
  EXPECT_DOUBLE_EQ(attention_score_pairs(10, 0, AttentionWindow::FULL, 4), 50.0);
  // Chunks of 4 over 10 queries: two whole chunks (4²/2 each) and a chunk of 2 (2²/2) = 18.
  EXPECT_DOUBLE_EQ(attention_score_pairs(10, 0, AttentionWindow::CHUNKED, 4), 18.0);
  // One query at position 6 (the third of chunk [4, 8)): keys 4, 5 and itself half = 2.5; sliding 4: 4.
  EXPECT_DOUBLE_EQ(attention_score_pairs(1, 6, AttentionWindow::CHUNKED, 4), 2.5);
  EXPECT_DOUBLE_EQ(attention_score_pairs(1, 6, AttentionWindow::SLIDING, 4), 4.0);
  // Without a window: seq·prefix + seq²/2.
  EXPECT_DOUBLE_EQ(attention_score_pairs(2, 3, AttentionWindow::FULL, 0), 8.0);
}

TEST(LayerOps, SlidingAndChunkedAttentionCore) {
  // GPT-OSS-20B: 64 query heads, 8 kv heads, head dim 64 (d_qk + d_v = 128); T = 8192 as 2 sequences of 4096.
  //   sliding 128: pairs per sequence 128²/2 + (4096 - 128)·128 = 8,192 + 507,904 = 516,096
  //                flops = 2·2·516,096·64·128 = 16,911,433,728 (full: 2·2·4096²/2·64·128 = 274,877,906,944)
  //   chunked 1024: 4 chunks of 1024²/2 = 2,097,152 pairs per sequence
  const ModelSpec oss = load_model("gpt-oss-20b");
  OpContext context = tokens_context(8192);
  context.seq_len = 4096;
  EXPECT_DOUBLE_EQ(layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0].flops,
                   274'877'906'944.0);
  context.window = AttentionWindow::SLIDING;
  context.window_tokens = 128;
  const KernelCost sliding = layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0];
  EXPECT_DOUBLE_EQ(sliding.flops, 16'911'433'728.0);
  EXPECT_DOUBLE_EQ(sliding.attn_score_pairs, 516'096.0);
  EXPECT_DOUBLE_EQ(sliding.attn_row_keys, 126.0);  // 516,096 / 4,096: 128 keys a row but for the first 128
  context.window = AttentionWindow::CHUNKED;
  context.window_tokens = 1024;
  const KernelCost chunked = layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0];
  EXPECT_DOUBLE_EQ(chunked.attn_score_pairs, 2'097'152.0);
  EXPECT_DOUBLE_EQ(chunked.attn_row_keys, 512.0);  // half a chunk
  context.window = AttentionWindow::FULL;
  EXPECT_EQ(layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0].attn_row_keys, 0.0);
}

TEST(LayerOps, SlidingDecodeReadsOnlyTheWindowOfTheCache) {
  // GPT-OSS-20B decode, bf16: 8 sequences of 1 query after 1000 cached keys, sliding window 128:
  //   pairs 8·128; flops = 2·1,024·64·128 = 16,777,216
  //   bytes = q 8·64·64·2 + k and v 8·128·8·64·2 each + o 8·64·64·2 + row stats 8·64·4
  //         = 65,536 + 2·1,048,576 + 65,536 + 2,048 = 2,230,272
  //   full attention reads all 1,001 keys: 131,072 + 2·(8·1001·8·64·2 = 8,200,192) + 2,048 = 16,533,504
  const ModelSpec oss = load_model("gpt-oss-20b");
  OpContext context = tokens_context(8);
  context.seq_len = 1;
  context.prefix_len = 1000;
  EXPECT_DOUBLE_EQ(layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0].bytes, 16'533'504.0);
  context.window = AttentionWindow::SLIDING;
  context.window_tokens = 128;
  const KernelCost kernel = layer_op_kernels(oss, LayerOp::ATTN_CORE, Pass::FORWARD, context)[0];
  EXPECT_DOUBLE_EQ(kernel.flops, 16'777'216.0);
  EXPECT_DOUBLE_EQ(kernel.bytes, 2'230'272.0);
}

TEST(LayerOps, MlaAttentionCoreUsesRopeAndValueWidths) {
  // DeepSeek-V2-Lite, one sequence of 4096, 16 heads, d_qk = 128 + 64 = 192, d_v = 128:
  //   2·4096²·16·(192 + 128)/2 = 16,777,216·16·320 = 85,899,345,920
  OpContext context = tokens_context(4096);
  context.seq_len = 4096;
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::ATTN_CORE, Pass::FORWARD, context)[0].flops,
                   85'899'345'920.0);
}

TEST(LayerOps, DecodeAttentionAttendsToThePrefix) {
  // Mixtral decode: batch 8 (8 sequences of 1 token), 1000 cached tokens each:
  //   query-key pairs = 8·(1·1000 + 1²/2) = 8004; flops = 2·8004·32·256 = 131,137,536
  OpContext context = tokens_context(8);
  context.seq_len = 1;
  context.prefix_len = 1000;
  EXPECT_DOUBLE_EQ(layer_op_kernels(mixtral(), LayerOp::ATTN_CORE, Pass::FORWARD, context)[0].flops,
                   131'137'536.0);
}

TEST(LayerOps, MlaDecodeAttendsOverTheLatentCacheAbsorbed) {
  // DeepSeek-V2-Lite decode (kv_lora_rank 512, rope 64, 16 heads, bf16): 8 sequences of 1 token, 1000 cached
  // each. Absorbed, every head scores against the 576-wide latent and sums its 512-wide value part:
  //   pairs = 8·(1000 + 1/2) = 8004; flops = 2·8004·16·(576 + 512) = 278,667,264
  //   bytes = q 8·16·576·2 + latent (8 + 8000)·576·2 + o 8·16·512·2 + row stats 8·16·4
  //         = 147,456 + 9,225,216 + 131,072 + 512 = 9,504,256
  OpContext context = tokens_context(8);
  context.seq_len = 1;
  context.prefix_len = 1000;
  const auto kernel = layer_op_kernels(v2_lite(), LayerOp::ATTN_CORE, Pass::FORWARD, context)[0];
  EXPECT_DOUBLE_EQ(kernel.flops, 278'667'264.0);
  EXPECT_DOUBLE_EQ(kernel.bytes, 9'504'256.0);
}

TEST(LayerOps, OutputProjectionUnderTensorParallelism) {
  // Mixtral, T = 4096, TP 2: k = 16 heads·128 = 2048, n = 4096: 2·4096·4096·2048 = 68,719,476,736
  OpContext context = tokens_context(4096);
  context.tp = 2;
  const auto kernels = layer_op_kernels(mixtral(), LayerOp::ATTN_OUT, Pass::FORWARD, context);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(kernels[0].flops, 68'719'476'736.0);
}

TEST(LayerOps, RoutedExpertsAsGroupedGemms) {
  // DeepSeek-V2-Lite, 4 local experts with 100, 0, 300, 200 rows (600 in all), H = 2048, ffn 1408:
  //   fc1  n = 2·1408 = 2816, k = 2048: 2·600·2816·2048 = 6,920,601,600; m = 600/4 = 150, groups 4
  //        bytes = (600·2048 + 3 experts with rows·2048·2816 + 600·2816)·2
  //              = (1,228,800 + 17,301,504 + 1,689,600)·2 = 40,439,808
  //   swiglu  read 600·2816·2 = 3,379,200, write 600·1408·2 = 1,689,600 → 5,068,800
  //   fc2  n = 2048, k = 1408: 2·600·2048·1408 = 3,460,300,800 (half of fc1, which computes gate and up)
  OpContext context = tokens_context(100);
  context.expert_tokens = {100, 0, 300, 200};
  const auto forward = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context);
  ASSERT_EQ(names(forward),
            (std::vector<std::string>{"routed_experts.fc1", "routed_experts.swiglu", "routed_experts.fc2"}));
  EXPECT_EQ(forward[0].kind, KernelClass::GROUPED_GEMM);
  EXPECT_DOUBLE_EQ(forward[0].flops, 6'920'601'600.0);
  EXPECT_DOUBLE_EQ(forward[0].bytes, 40'439'808.0);
  EXPECT_EQ(forward[0].gemm.m, 150);
  EXPECT_EQ(forward[0].gemm.groups, 4);
  EXPECT_DOUBLE_EQ(forward[1].bytes, 5'068'800.0);
  EXPECT_DOUBLE_EQ(forward[2].flops, 3'460'300'800.0);

  // Backward in reverse order; the activation's DGRAD moves 2 × 5,068,800 = 10,137,600 bytes.
  const auto dgrad = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::DGRAD, context);
  ASSERT_EQ(names(dgrad), (std::vector<std::string>{"routed_experts.fc2.dgrad", "routed_experts.swiglu.dgrad",
                                                    "routed_experts.fc1.dgrad"}));
  EXPECT_DOUBLE_EQ(dgrad[1].bytes, 10'137'600.0);
  // fc1 + fc2 = 6,920,601,600 + 3,460,300,800 = 10,380,902,400 in each backward pass.
  EXPECT_DOUBLE_EQ(total_flops(dgrad), 10'380'902'400.0);
  // WGRAD of fc1: dW[2048, 2816] = Xᵀ[2048, rows]·dY[rows, 2816] per expert.
  const auto wgrad = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::WGRAD, context);
  ASSERT_EQ(names(wgrad), (std::vector<std::string>{"routed_experts.fc2.wgrad", "routed_experts.fc1.wgrad"}));
  EXPECT_EQ(wgrad[1].gemm.m, 2048);
  EXPECT_EQ(wgrad[1].gemm.n, 2816);
  EXPECT_EQ(wgrad[1].gemm.k, 150);
  EXPECT_DOUBLE_EQ(total_flops(wgrad), 10'380'902'400.0);
}

TEST(LayerOps, RoutedExpertsAsOneGemmPerExpert) {
  // The same 4 experts (100, 0, 300, 200 rows) as a loop: one gather of the 600 rows by expert (600·2048·2
  // bytes read and written = 4,915,200), fc1, swiglu, fc2 for each of the 3 experts with rows, and the
  // gather back into source order for Combine; FLOPs as grouped.
  OpContext context = tokens_context(100);
  context.expert_tokens = {100, 0, 300, 200};
  context.expert_loop = true;
  context.regroup_by_expert = true;
  const auto forward = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context);
  ASSERT_EQ(forward.size(), 1u + 3u * 3u + 1u);
  EXPECT_EQ(forward[0].name, "routed_experts.group_by_expert");
  EXPECT_DOUBLE_EQ(forward[0].bytes, 4'915'200.0);
  EXPECT_EQ(forward.back().name, "routed_experts.group_by_source");
  EXPECT_DOUBLE_EQ(forward.back().bytes, 4'915'200.0);
  EXPECT_EQ(forward[1].kind, KernelClass::GEMM);
  EXPECT_EQ(forward[1].gemm.m, 100);
  EXPECT_EQ(forward[4].gemm.m, 300);  // expert 1 has no rows and no kernels
  EXPECT_EQ(forward[7].gemm.m, 200);
  // fc1 + fc2 of all experts: 6,920,601,600 + 3,460,300,800.
  EXPECT_DOUBLE_EQ(total_flops(forward), 10'380'902'400.0);
}

TEST(LayerOps, GroupedExpertsRegroupOnlyAfterAnAllToAll) {
  // Grouped: the same two gathers of 600·2048·2 bytes each way around fc1, swiglu and fc2 when rows come by
  // source rank; all-reduce style rows are already in expert order (no gathers); one local expert needs none.
  OpContext context = tokens_context(100);
  context.expert_tokens = {100, 0, 300, 200};
  context.regroup_by_expert = true;
  const auto after_alltoall = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context);
  ASSERT_EQ(after_alltoall.size(), 5u);
  EXPECT_EQ(after_alltoall[0].name, "routed_experts.group_by_expert");
  EXPECT_DOUBLE_EQ(after_alltoall[0].bytes, 4'915'200.0);
  EXPECT_EQ(after_alltoall[1].kind, KernelClass::GROUPED_GEMM);
  EXPECT_EQ(after_alltoall[4].name, "routed_experts.group_by_source");
  context.regroup_by_expert = false;
  const auto expert_order = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context);
  ASSERT_EQ(expert_order.size(), 3u);
  EXPECT_EQ(expert_order[0].kind, KernelClass::GROUPED_GEMM);
  context.regroup_by_expert = true;
  context.expert_tokens = {600};
  EXPECT_EQ(layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context).size(), 3u);
}

TEST(LayerOps, RoutedRowsSpreadEvenlyWhenNoPerExpertCounts) {
  // 10 rows over 4 experts: 3, 3, 2, 2 — the same FLOPs as any split: 2·10·2816·2048 = 115,343,360 in fc1.
  OpContext context = tokens_context(10);
  context.routed_rows = 10;
  context.experts_total_local = 4;
  const auto kernels = layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, context);
  EXPECT_DOUBLE_EQ(kernels[0].flops, 115'343'360.0);
  EXPECT_EQ(kernels[0].gemm.groups, 4);
  EXPECT_TRUE(
      layer_op_kernels(v2_lite(), LayerOp::ROUTED_EXPERTS, Pass::FORWARD, tokens_context(10)).empty());
}

TEST(LayerOps, SharedExpertsAndDenseFfn) {
  // V2-Lite shared experts, T = 10: one MLP of width 2·1408 = 2816:
  //   fc1 2·10·5632·2048 = 230,686,720; fc2 2·10·2048·2816 = 115,343,360
  const auto shared = layer_op_kernels(v2_lite(), LayerOp::SHARED_EXPERTS, Pass::FORWARD, tokens_context(10));
  ASSERT_EQ(shared.size(), 3u);
  EXPECT_DOUBLE_EQ(shared[0].flops, 230'686'720.0);
  EXPECT_DOUBLE_EQ(shared[2].flops, 115'343'360.0);
  EXPECT_TRUE(
      layer_op_kernels(mixtral(), LayerOp::SHARED_EXPERTS, Pass::FORWARD, tokens_context(10)).empty());
  EXPECT_TRUE(layer_op_kernels(mixtral(), LayerOp::DENSE_FFN, Pass::FORWARD, tokens_context(10)).empty());
  // GPT-MoE-S dense FFN (GELU, no gate), T = 1000: fc1 2·1000·1024·512 = 1,048,576,000, fc2 the same.
  const auto dense =
      layer_op_kernels(load_model("gpt-moe-s"), LayerOp::DENSE_FFN, Pass::FORWARD, tokens_context(1000));
  ASSERT_EQ(names(dense), (std::vector<std::string>{"dense_ffn.fc1", "dense_ffn.gelu", "dense_ffn.fc2"}));
  EXPECT_DOUBLE_EQ(total_flops(dense), 2'097'152'000.0);
  EXPECT_EQ(dense[0].gemm.n, 1024);
}

TEST(LayerOps, GateRouterAndTopK) {
  // DeepSeek-V3, T = 100: router 2·100·256·7168 = 367,001,600;
  //   top-k reads 100·256 logits·2 B = 51,200 and writes 100·8·(4 B index + 4 B weight) = 6,400 → 57,600
  const auto kernels =
      layer_op_kernels(load_model("deepseek-v3"), LayerOp::GATE, Pass::FORWARD, tokens_context(100));
  ASSERT_EQ(names(kernels), (std::vector<std::string>{"gate.router", "gate.softmax_topk"}));
  EXPECT_DOUBLE_EQ(kernels[0].flops, 367'001'600.0);
  EXPECT_DOUBLE_EQ(kernels[1].bytes, 57'600.0);
  // The top-k carries its selection for the profile's router table; its backward is a plain bandwidth pass.
  EXPECT_EQ(kernels[1].kind, KernelClass::ROUTER_TOPK);
  EXPECT_EQ(kernels[1].route.tokens, 100);
  EXPECT_EQ(kernels[1].route.experts, 256);
  EXPECT_EQ(kernels[1].route.top_k, 8);
  const auto dgrad =
      layer_op_kernels(load_model("deepseek-v3"), LayerOp::GATE, Pass::DGRAD, tokens_context(100));
  ASSERT_EQ(dgrad.size(), 2u);
  EXPECT_EQ(dgrad[0].kind, KernelClass::MEMORY);
  EXPECT_DOUBLE_EQ(dgrad[0].bytes, 2 * 57'600.0);
}

TEST(LayerOps, PermuteUnpermuteNormsAndResidual) {
  // V2-Lite, T = 100 tokens, 600 routed rows, H = 2048, bf16:
  //   permute    read + write 600·2048·2 = 2·2,457,600 = 4,915,200
  //   unpermute  read 2,457,600 + weights 600·4 = 2,400, write 100·2048·2 = 409,600 → 2,869,600
  //   norm       read + write 409,600 = 819,200; its DGRAD 2× = 1,638,400
  //   residual   read 2·409,600, write 409,600 = 1,228,800
  OpContext context = tokens_context(100);
  context.routed_rows = 600;
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::PERMUTE, Pass::FORWARD, context)[0].bytes,
                   4'915'200.0);
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::UNPERMUTE, Pass::FORWARD, context)[0].bytes,
                   2'869'600.0);
  const auto norm = layer_op_kernels(v2_lite(), LayerOp::ATTN_NORM, Pass::FORWARD, context);
  ASSERT_EQ(names(norm), std::vector<std::string>{"attn_norm.rmsnorm"});
  EXPECT_DOUBLE_EQ(norm[0].bytes, 819'200.0);
  // FarSkip's norm summing two more activation tensors into its input: 3 reads + 1 write = 1,638,400.
  OpContext fused = context;
  fused.norm_extra_inputs = 2;
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::MLP_NORM, Pass::FORWARD, fused)[0].bytes,
                   1'638'400.0);
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::MLP_NORM, Pass::DGRAD, context)[0].bytes,
                   1'638'400.0);
  EXPECT_TRUE(layer_op_kernels(v2_lite(), LayerOp::MLP_NORM, Pass::WGRAD, context).empty());
  EXPECT_DOUBLE_EQ(layer_op_kernels(v2_lite(), LayerOp::RESIDUAL_ADD, Pass::FORWARD, context)[0].bytes,
                   1'228'800.0);
}

TEST(LayerOps, DtypeScalesBytesNotFlops) {
  OpContext fp8 = tokens_context(4096);
  fp8.dtype = DType::FP8;
  const auto bf16_kernels =
      layer_op_kernels(mixtral(), LayerOp::ATTN_QKV, Pass::FORWARD, tokens_context(4096));
  const auto fp8_kernels = layer_op_kernels(mixtral(), LayerOp::ATTN_QKV, Pass::FORWARD, fp8);
  EXPECT_DOUBLE_EQ(fp8_kernels[0].flops, bf16_kernels[0].flops);
  EXPECT_DOUBLE_EQ(fp8_kernels[0].bytes, bf16_kernels[0].bytes / 2);
}

TEST(LayerOps, BackwardGemmsRepeatTheForwardFlopsInBothPasses) {
  OpContext context = tokens_context(512);
  context.seq_len = 512;
  context.routed_rows = 512 * 6;
  context.experts_total_local = 8;
  for (const char* model : {"deepseek-v2-lite", "deepseek-v3", "mixtral-8x7b", "gpt-moe-m"}) {
    const ModelSpec spec = load_model(model);
    for (int index = 0; index <= static_cast<int>(LayerOp::RESIDUAL_ADD); ++index) {
      const auto op = static_cast<LayerOp>(index);
      if (op == LayerOp::ATTN_CORE) continue;
      SCOPED_TRACE(std::string(model) + " " + to_string(op));
      const double forward = total_flops(layer_op_kernels(spec, op, Pass::FORWARD, context));
      EXPECT_DOUBLE_EQ(total_flops(layer_op_kernels(spec, op, Pass::DGRAD, context)), forward);
      EXPECT_DOUBLE_EQ(total_flops(layer_op_kernels(spec, op, Pass::WGRAD, context)), forward);
    }
  }
}

TEST(LayerOps, ImpossibleContextsAreScheduleErrors) {
  OpContext odd_tp = tokens_context(64);
  odd_tp.tp = 3;
  EXPECT_THROW(layer_op_kernels(mixtral(), LayerOp::ATTN_QKV, Pass::FORWARD, odd_tp), ScheduleError);
  OpContext ragged = tokens_context(100);
  ragged.seq_len = 30;
  EXPECT_THROW(layer_op_kernels(mixtral(), LayerOp::ATTN_CORE, Pass::FORWARD, ragged), ScheduleError);
}

TEST(LayerOps, OpNames) {
  EXPECT_EQ(to_string(LayerOp::ATTN_QKV), "attn_qkv");
  EXPECT_EQ(to_string(LayerOp::RESIDUAL_ADD), "residual_add");
  EXPECT_EQ(to_string(Pass::WGRAD), "wgrad");
  EXPECT_EQ(to_string(KernelClass::GROUPED_GEMM), "grouped_gemm");
}

}  // namespace
}  // namespace moesim::models
