// A trace without moesim's ranges: the ops read from its module calls (profile(with_stack=True)).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "moesim/common/Error.hpp"
#include "moesim/traces/ModuleRanges.hpp"
#include "moesim/traces/OpAttribution.hpp"

namespace moesim::traces {
namespace {

// A hand-made trace: module calls, a launch (its kernel named for the op it must land in) wherever a test
// puts one, and the linear projections' input widths.
class TraceBuilder {
 public:
  TraceBuilder& module(const std::string& name, double ts, double dur, int tid = 1) {
    add({{"cat", "python_function"}, {"name", "nn.Module: " + name}, {"tid", tid}, {"ts", ts}, {"dur", dur}});
    return *this;
  }
  TraceBuilder& launch(const std::string& kernel, double ts) {
    ++correlation_;
    add({{"cat", "cuda_runtime"},
         {"name", "cudaLaunchKernel"},
         {"tid", 1},
         {"ts", ts},
         {"dur", 0.2},
         {"args", {{"correlation", correlation_}}}});
    add({{"cat", "kernel"},
         {"name", kernel},
         {"ts", ts + 0.1},
         {"dur", 0.5},
         {"args", {{"correlation", correlation_}}}});
    return *this;
  }
  // a projection reading `width` features (record_shapes' Input Dims of its aten::linear)
  TraceBuilder& linear(const std::string& name, double ts, std::int64_t width, const std::string& kernel) {
    module(name, ts, 3);
    add({{"cat", "cpu_op"},
         {"name", "aten::linear"},
         {"tid", 1},
         {"ts", ts + 0.5},
         {"dur", 2},
         {"args", {{"Input Dims", {{16, width}, {64, width}}}}}});
    return launch(kernel, ts + 1);
  }
  TraceBuilder& range(const std::string& name, double ts, double dur) {
    add({{"cat", "user_annotation"}, {"name", name}, {"tid", 1}, {"ts", ts}, {"dur", dur}});
    return *this;
  }
  TorchTrace trace() const {
    return parse_torch_trace(nlohmann::json{{"traceEvents", events_}}.dump(), "t.json");
  }

 private:
  void add(nlohmann::json event) {
    event["ph"] = "X";
    events_.push_back(std::move(event));
  }
  nlohmann::json events_ = nlohmann::json::array();
  int correlation_ = 0;
};

// A transformers-style decoder layer from `t`: pre-norm, attention with per-head q/k norms, post-attention
// norm, a sparse MoE block (router, experts, the block's own work after them); the residual adds in the
// layer's body.
void qwen_layer(TraceBuilder& b, int i, double t) {
  const std::string n = std::to_string(i);
  b.module("Qwen3MoeDecoderLayer_" + n, t, 100);
  b.module("Qwen3MoeRMSNorm_" + n + "0", t + 1, 4).launch("attn_norm", t + 2);
  b.module("Qwen3MoeAttention_" + n, t + 6, 44);
  b.linear("Linear_" + n + "0", t + 7, 64, "attn_qkv");
  b.module("Qwen3MoeRMSNorm_" + n + "1", t + 11, 2).launch("attn_qkv/qk", t + 12);
  b.linear("Linear_" + n + "1", t + 14, 64, "attn_qkv");
  b.linear("Linear_" + n + "2", t + 18, 64, "attn_qkv");
  b.launch("attn_core", t + 30);
  b.linear("Linear_" + n + "3", t + 40, 128, "attn_out");
  b.launch("residual_add", t + 52);
  b.module("Qwen3MoeRMSNorm_" + n + "2", t + 55, 3).launch("mlp_norm", t + 56);
  b.module("Qwen3MoeSparseMoeBlock_" + n, t + 60, 39);
  b.module("Qwen3MoeTopKRouter_" + n, t + 61, 4).launch("gate", t + 62);
  b.module("Qwen3MoeExperts_" + n, t + 66, 24)
      .launch("routed_experts", t + 70)
      .launch("routed_experts", t + 80);
  b.launch("unpermute", t + 95);
}

// kernel name -> the ops (layer.op, "/qk" where marked a per-head q/k norm's) its launches were attributed to
std::multimap<std::string, std::string> ops_of_kernels(const AttributedStep& s) {
  std::multimap<std::string, std::string> out;
  for (const OpCall& c : s.calls)
    for (const TracedItem& item : c.items)
      if (item.kind == TracedItem::Kind::LAUNCH)
        out.emplace(item.gpu.name, std::to_string(c.layer) + "." + c.op + (item.qk_norm ? "/qk" : ""));
  return out;
}

// `launches` launches, each attributed to layer 0's op its kernel is named for.
void expect_each_launch_in_layer0s_op_named(const TorchTrace& trace, std::size_t launches) {
  const auto ops = ops_of_kernels(attribute_step(trace));
  EXPECT_EQ(ops.size(), launches);
  for (const auto& [kernel, op] : ops) EXPECT_EQ(op, "0." + kernel);
}

TEST(ModuleRanges, ATransformersModelsModulesGiveEveryOpOfEveryLayer) {
  TraceBuilder b;
  b.range("ProfilerStep#1", 0, 400);
  b.module("Qwen3MoeModel_0", 1, 300);
  b.module("Qwen3MoeRotaryEmbedding_0", 2, 3).launch("model_inputs", 3);
  qwen_layer(b, 0, 10);
  qwen_layer(b, 1, 120);
  b.module("Qwen3MoeRMSNorm_9", 230, 10).launch("final_norm", 235);
  const AttributedStep s = attribute_step(b.trace());
  EXPECT_TRUE(s.ops_from_modules);
  EXPECT_EQ(s.layers, 2);
  const auto ops = ops_of_kernels(s);
  EXPECT_EQ(ops.size(), 2u * 13 + 2);
  for (const auto& [kernel, op] : ops) {
    if (kernel == "model_inputs")
      EXPECT_EQ(op, "0.model_inputs");
    else if (kernel == "final_norm")
      EXPECT_EQ(op, "1.final_norm");
    else
      EXPECT_EQ(op.substr(2), kernel) << op;  // every layer's launches in that layer's op
  }
  EXPECT_EQ(ops.count("attn_qkv/qk"), 2u);
  // the step is the profiler's, the forward the model's call
  EXPECT_DOUBLE_EQ(s.host_us, 400);
  EXPECT_DOUBLE_EQ(s.forward_host_us, 301);
}

// DeepSeek's MLA projects a low-rank latent: the norm of it is the attention's, not a per-head q/k norm.
TEST(ModuleRanges, ANormOfALatentStaysInTheAttention) {
  TraceBuilder b;
  b.module("DeepseekV2Model_0", 0, 200);
  b.module("DeepseekV2DecoderLayer_0", 1, 150);
  b.module("DeepseekV2Attention_0", 2, 60);
  b.linear("Linear_0", 3, 64, "attn_qkv");
  b.linear("Linear_1", 7, 64, "attn_qkv");
  b.module("DeepseekV2RMSNorm_1", 11, 2).launch("attn_core", 12);
  b.linear("Linear_2", 14, 16, "attn_qkv");  // reads the latent
  b.linear("Linear_3", 50, 128, "attn_out");
  b.module("DeepseekV2MLP_0", 70, 40).launch("dense_ffn", 75);
  b.linear("Linear_4", 80, 64, "dense_ffn");  // a dense MLP's first projection is no router
  expect_each_launch_in_layer0s_op_named(b.trace(), 7);
}

// Megatron-style layers: identity modules where norms are configured away, parallel linears, a router, one
// grouped experts module and a shared expert.
TEST(ModuleRanges, MegatronsModulesByTheirClassNames) {
  TraceBuilder b;
  b.module("GPTModel_0", 0, 300);
  b.module("TransformerLayer_0", 1, 290);
  b.module("IdentityOp_0", 2, 1);
  b.module("SelfAttention_0", 4, 60);
  b.linear("TELayerNormColumnParallelLinear_0", 5, 64, "attn_qkv");
  b.module("TEDotProductAttention_0", 10, 20).launch("attn_core", 15);
  b.linear("TERowParallelLinear_0", 40, 128, "attn_out");
  b.module("IdentityOp_1", 70, 1);
  b.module("MoELayer_0", 80, 200);
  b.module("TopKRouter_0", 81, 10).launch("gate", 85);
  b.launch("unpermute", 95);  // the token dispatcher is no module: the block's own work
  b.module("TEGroupedMLP_0", 100, 100).launch("routed_experts", 150);
  b.module("SharedExpertMLP_0", 210, 60).launch("shared_experts", 220);
  expect_each_launch_in_layer0s_op_named(b.trace(), 7);
}

// Two micro-batches in one profiler step (gradient accumulation): the step is the last forward's.
TEST(ModuleRanges, OfTwoForwardsInAStepTheLastIsLearned) {
  TraceBuilder b;
  b.range("ProfilerStep#3", 0, 1000);
  for (double t : {10.0, 500.0}) {
    b.module("Qwen3MoeModel_0", t, 200);
    qwen_layer(b, 0, t + 10);
  }
  const TorchTrace trace = b.trace();
  const std::vector<Range> ranges = op_ranges_from_modules(trace);
  ASSERT_FALSE(ranges.empty());
  for (const Range& r : ranges) EXPECT_GE(r.ts_us, 500) << r.name;
  EXPECT_EQ(ranges.front().name, "moesim.step");
  EXPECT_DOUBLE_EQ(ranges.front().end_us(), 1000);
  EXPECT_EQ(ops_of_kernels(attribute_step(trace)).size(), 13u);  // the last forward's launches only
}

// Activation checkpointing calls the layers again in the backward, on autograd's thread: not the forward.
TEST(ModuleRanges, LayersCalledOnAnotherThreadAreNotTheForward) {
  TraceBuilder b;
  b.range("ProfilerStep#1", 0, 1000);
  b.module("Qwen3MoeModel_0", 10, 200);
  qwen_layer(b, 0, 20);
  b.module("Qwen3MoeDecoderLayer_0", 500, 100, 2)
      .module("Qwen3MoeAttention_0", 510, 20, 2)
      .module("Qwen3MoeSparseMoeBlock_0", 540, 50, 2);
  const std::vector<Range> ranges = op_ranges_from_modules(b.trace());
  ASSERT_FALSE(ranges.empty());
  for (const Range& r : ranges) EXPECT_EQ(r.tid, 1) << r.name;
  EXPECT_EQ(ranges.at(1).name, "moesim.forward");
  EXPECT_DOUBLE_EQ(ranges.at(1).ts_us, 10);
}

TEST(ModuleRanges, WithoutModulesOrRangesTheErrorSaysHowToTrace) {
  TraceBuilder b;
  b.launch("k", 1);
  const TorchTrace trace = b.trace();
  EXPECT_TRUE(op_ranges_from_modules(trace).empty());
  try {
    attribute_step(trace);
    FAIL() << "a trace without ranges or modules was attributed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("with_stack=True"), std::string::npos) << e.what();
  }
  // "nn.Module: X" without an instance number is no module call
  EXPECT_TRUE(TraceBuilder().module("Linear", 1, 2).launch("k", 1.5).trace().modules.empty());
  EXPECT_EQ(
      TraceBuilder().module("Qwen3MoeAttention_12", 1, 2).launch("k", 1.5).trace().modules.at(0).instance,
      12);
}

// transformers' models traced the user's way and with moesim's ranges, one configuration each, on one H200
// (data/torch-stacks/2026-11-29-nvidia-h200-x1-plain): every op of every layer has the same launches, forward
// and backward. DeepSeek-V2's MLA projects latents (and normalizes them: one norm in V2-Lite, two in V2).
// Qwen3's plain forward-only trace against the forward of a training trace with ranges from another lease (a
// forward records autograd either way: the same kernels).
TEST(ModuleRanges, PlainTracesOfTransformersModelsAttributeAsAnnotatedOnes) {
  const std::string stacks = MOESIM_DEVICE_STACKS;
  const std::string plain = stacks + "/2026-11-29-nvidia-h200-x1-plain/";
  using Counts = std::map<std::tuple<int, std::string, bool>, int>;
  const auto counts = [](const std::string& file, bool forward_only) {
    const AttributedStep s = attribute_step(load_torch_trace(file));
    Counts out;
    for (const OpCall& c : s.calls)
      if (!(forward_only && c.backward))
        for (const TracedItem& item : c.items)
          out[{c.layer, c.op, c.backward}] += item.kind == TracedItem::Kind::LAUNCH;
    return std::pair{out, s.ops_from_modules};
  };
  const std::string train = ".ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz";
  for (const char* config :
       {"olmoe-1b-7b.hf-eager", "olmoe-1b-7b.hf-grouped_mm", "qwen1.5-moe-a2.7b.hf-grouped_mm",
        "deepseek-v2-lite.hf-grouped_mm", "deepseek-v2.hf-grouped_mm"}) {
    const auto [from_modules, plain_read] = counts(plain + "plain/" + config + train, false);
    const auto [from_ranges, annotated_read] = counts(plain + "annotated/" + config + train, false);
    EXPECT_TRUE(plain_read && !annotated_read) << config;
    EXPECT_GE(from_modules.size(), 30u) << config;  // 2 layers' ops, forward and backward
    EXPECT_EQ(from_modules, from_ranges) << config;
  }
  const auto [forward, read] = counts(
      plain +
          "plain/qwen3-30b-a3b.hf-grouped_mm.ep1.t2048.s2048.l2.forward.regular.balanced.rank0.trace.json.gz",
      true);
  const auto [trained, _] =
      counts(stacks + "/2026-11-28-nvidia-h200-x2-c/hf/qwen3-30b-a3b.hf-grouped_mm" + train, true);
  EXPECT_TRUE(read);
  EXPECT_EQ(forward, trained);
}

// transformers' MoE architectures at tiny widths, each traced for a training step as a user would
// (data/torch-stacks/2026-11-29-nvidia-h200-x1-zoo, kernels/tools/trace_transformers_zoo.py): 2 decoder
// layers, the second a MoE layer (the first dense where the model makes its first layers dense). From the
// module calls alone every one gives both layers with a mixer (attention, or Qwen3-Next's gated DeltaNet and
// GraniteMoeHybrid's Mamba), the MoE layer's gate and routed experts, their backward, and leaves under 3% of
// the step's GPU time unattributed.
TEST(ModuleRanges, TransformersMoeArchitecturesFromTheirModuleCalls) {
  const std::string zoo = std::string(MOESIM_DEVICE_STACKS) + "/2026-11-29-nvidia-h200-x1-zoo/";
  const std::vector<std::string> types = {"deepseek_v2",    "deepseek_v3", "dots1",       "ernie4_5_moe",
                                          "flex_olmo",      "glm4_moe",    "granitemoe",  "granitemoehybrid",
                                          "hunyuan_v1_moe", "jetmoe",      "llama4_text", "minimax",
                                          "mixtral",        "olmoe",       "phimoe",      "qwen2_moe",
                                          "qwen3_moe",      "qwen3_next"};
  for (const std::string& type : types) {
    const AttributedStep s = attribute_step(load_torch_trace(zoo + type + ".default.trace.json.gz"));
    std::set<std::string> ops;  // layer.op[.bwd]
    for (const OpCall& c : s.calls)
      ops.insert(std::to_string(c.layer) + "." + c.op + (c.backward ? ".bwd" : ""));
    EXPECT_TRUE(s.ops_from_modules) << type;
    EXPECT_EQ(s.layers, 2) << type;
    for (const char* op : {"0.attn_core", "1.attn_core", "1.gate", "1.routed_experts", "0.attn_core.bwd",
                           "1.routed_experts.bwd", "1.final_norm"})
      EXPECT_TRUE(ops.count(op)) << type << " has no " << op;
    EXPECT_TRUE(ops.count("0.routed_experts") || ops.count("0.dense_ffn")) << type;
    EXPECT_LT(s.unattributed_gpu_us(), 0.03 * s.gpu_us) << type;
  }
}

}  // namespace
}  // namespace moesim::traces
