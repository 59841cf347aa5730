// Reading PyTorch profiler traces and torch-stack records, and attributing a step's launches to moesim's ops.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "moesim/common/Error.hpp"
#include "moesim/common/JsonReader.hpp"
#include "moesim/traces/OpAttribution.hpp"
#include "moesim/traces/TorchStackRecord.hpp"
#include "moesim/traces/TraceFile.hpp"

namespace moesim::traces {
namespace {

const std::string kData = MOESIM_TRACE_TEST_DATA;
const std::string kForward = kData + "/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced";
const std::string kTrain = kData + "/qwen3-30b-a3b.grouped.ep2.t256.s128.l2.train.farskip.balanced";

std::string error_of(const std::string& text) {
  try {
    parse_torch_trace(text, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TorchTrace, ReadsGzipAndClassifiesKernels) {
  const TorchTrace t = load_torch_trace(kForward + ".rank0.trace.json.gz");
  ASSERT_FALSE(t.gpu.empty());
  std::set<GpuKind> kinds;
  for (const GpuEvent& g : t.gpu) kinds.insert(g.kind);
  // cuBLAS/CUTLASS GEMMs, cuDNN attention, elementwise kernels, memsets and copies: no NCCL at EP 1.
  for (GpuKind k : {GpuKind::GEMM, GpuKind::ATTENTION, GpuKind::OTHER, GpuKind::MEMSET, GpuKind::MEMCPY})
    EXPECT_TRUE(kinds.count(k)) << to_string(k);
  EXPECT_FALSE(kinds.count(GpuKind::NCCL));
  EXPECT_EQ(kernel_kind("void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t>"),
            GpuKind::OTHER);
  EXPECT_EQ(kernel_kind("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), GpuKind::NCCL);
}

TEST(TorchTrace, ACopyOrMemsetKeepsTheBytesItMoves) {
  const TorchTrace t = parse_torch_trace(R"j({"traceEvents": [
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 1, "dur": 1, "args": {"bytes": 4}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "ts": 3, "dur": 9, "args": {"bytes": 8388608}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst", "ts": 2, "dur": 5, "args": {"bytes": 7}}]})j",
                                         "t.json");
  std::map<GpuKind, std::int64_t> bytes;
  for (const GpuEvent& g : t.gpu) bytes[g.kind] = g.bytes;
  EXPECT_EQ(bytes.at(GpuKind::MEMSET), 4);
  EXPECT_EQ(bytes.at(GpuKind::MEMCPY), 8388608);
  EXPECT_EQ(bytes.at(GpuKind::GEMM), -1);  // a kernel does not say what it moves
}

// aten::cat records its list of tensors as a list of shapes: the learner reads the tensor they make.
TEST(TorchTrace, ATensorListStandsAsTheTensorItsPartsMake) {
  const TorchTrace t = parse_torch_trace(R"j({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 1, "dur": 1,
     "args": {"Input Dims": [[[1, 16, 4096, 128], [1, 16, 4096, 64]], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 2, "dur": 1,
     "args": {"Input Dims": [[[2048, 64], [2048, 64]], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 3, "dur": 1,
     "args": {"Input Dims": [[[8, 4], [2, 32]], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 3.5, "dur": 0.1,
     "args": {"Input Dims": [[[9223372036854775807], [9223372036854775807]], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 4, "dur": 1,
     "args": {"Input Dims": [[4, -1], [4, 2], []]}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst", "ts": 2, "dur": 5}]})j",
                                         "t.json");
  ASSERT_EQ(t.cpu_ops.size(), 5u);
  // MLA's query heads: a 128-wide and a 64-wide part make 192.
  EXPECT_EQ(t.cpu_ops[0].inputs.front(), (std::vector<std::int64_t>{1, 16, 4096, 192}));
  EXPECT_TRUE(t.cpu_ops[0].inputs.back().empty());
  // Equal parts (RoPE's halves) join along the last dim.
  EXPECT_EQ(t.cpu_ops[1].inputs.front(), (std::vector<std::int64_t>{2048, 128}));
  // Parts that differ in two dims stand as the largest.
  EXPECT_EQ(t.cpu_ops[2].inputs.front(), (std::vector<std::int64_t>{2, 32}));
  // Parts whose joined dim would overflow stand as one of them, not as a wrapped size.
  EXPECT_EQ(t.cpu_ops[3].inputs.front(), (std::vector<std::int64_t>{9223372036854775807}));
  // A shape with a negative dim is no shape.
  EXPECT_TRUE(t.cpu_ops[4].inputs.front().empty());
  EXPECT_EQ(t.cpu_ops[4].inputs[1], (std::vector<std::int64_t>{4, 2}));
}

TEST(TorchTrace, ForeignOrEmptyTracesAreOneLineErrors) {
  // The legacy profiler's bare list (Debian's torch 1.13 on the CPU): no traceEvents.
  const std::string legacy =
      kData + "/cpu-legacy/qwen3-30b-a3b.grouped.ep1.t64.s32.l2.forward.farskip.balanced.rank0.trace.json.gz";
  try {
    load_torch_trace(legacy);
    FAIL() << "a legacy trace was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/traceEvents is missing"), std::string::npos) << e.what();
  }
  // A trace of one complete event with these fields.
  auto event_error = [](const std::string& fields) {
    return error_of(R"({"traceEvents": [{"ph": "X", )" + fields + "}]}");
  };
  EXPECT_NE(
      event_error(R"("cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2)").find("holds no GPU kernels"),
      std::string::npos);
  EXPECT_NE(
      event_error(R"("cat": "kernel", "name": "k", "ts": 1, "dur": -2)").find("t.json: /traceEvents/0/dur"),
      std::string::npos);
  // Syntax errors name the line; a bad value names its JSON pointer and shows it; no event lasts an hour.
  EXPECT_EQ(error_of("{\"traceEvents\": [\n{\"ph\": \"X\",\n \"cat\": kernel}]}")
                .rfind("t.json:3: invalid JSON", 0),
            0u);
  EXPECT_NE(event_error(R"("cat": 7)").find("t.json: /traceEvents/0/cat = 7: must be a string"),
            std::string::npos);
  EXPECT_NE(event_error(R"("cat": "kernel", "name": "k", "ts": 1, "dur": 4e9)")
                .find("t.json: /traceEvents/0/dur = 4000000000.0: must be <= 3.6e9 us"),
            std::string::npos);
  const std::string truncated = testing::TempDir() + "/truncated.json.gz";
  {
    std::ofstream out(truncated, std::ios::binary);
    out << "\x1f\x8b\x08\x00\x00\x00\x00\x00";
  }
  EXPECT_THROW(read_trace_text(truncated), ConfigError);
  std::remove(truncated.c_str());
}

TEST(OpAttribution, EveryForwardOpOfEveryLayer) {
  const AttributedStep s = attribute_step(load_torch_trace(kForward + ".rank0.trace.json.gz"));
  EXPECT_EQ(s.layers, 2);
  EXPECT_FALSE(s.has_backward);
  for (int layer = 0; layer < 2; ++layer) {
    for (const char* op : {"attn_norm", "attn_qkv", "attn_core", "attn_out", "mlp_norm", "gate", "permute",
                           "routed_experts", "unpermute", "residual_add"}) {
      const OpCall* c = s.find(layer, op, false);
      ASSERT_NE(c, nullptr) << "L" << layer << "." << op;
      EXPECT_FALSE(c->items.empty());
    }
  }
  // Attributed and unattributed GPU time add up to the step's; host gaps are never negative.
  double attributed = 0;
  for (const OpCall& c : s.calls) {
    for (const TracedItem& item : c.items) {
      EXPECT_GE(item.host_us, 0);
      if (item.kind == TracedItem::Kind::LAUNCH) attributed += item.gpu.dur_us;
    }
  }
  EXPECT_NEAR(attributed + s.unattributed_gpu_us(), s.gpu_us, 1e-6 * s.gpu_us);
  // bincount reads its min and max back: the permute of every layer syncs with the host.
  int syncs = 0;
  for (const TracedItem& item : s.find(0, "permute", false)->items)
    syncs += item.kind == TracedItem::Kind::SYNC;
  EXPECT_GE(syncs, 2);
}

TEST(OpAttribution, BackwardLaunchesFindTheirForwardOpBySequenceNumber) {
  const AttributedStep s = attribute_step(load_torch_trace(kTrain + ".rank0.trace.json.gz"));
  EXPECT_TRUE(s.has_backward);
  for (const char* op : {"attn_norm", "attn_qkv", "attn_core", "attn_out", "gate", "routed_experts"}) {
    const OpCall* c = s.find(1, op, true);
    ASSERT_NE(c, nullptr) << op << " backward";
    EXPECT_FALSE(c->items.empty());
  }
  // EP 2: Dispatch and Combine and their gradients are NCCL kernels of the collectives' own calls.
  for (bool backward : {false, true}) {
    for (const char* comm : {"dispatch", "combine"}) {
      const OpCall* c = s.find(0, comm, backward);
      ASSERT_NE(c, nullptr) << comm << (backward ? " backward" : "");
      bool nccl = false;
      for (const TracedItem& item : c->items) nccl = nccl || item.gpu.kind == GpuKind::NCCL;
      EXPECT_TRUE(nccl) << comm;
    }
  }
  EXPECT_LT(s.unattributed_gpu_us(), 0.05 * s.gpu_us);
}

// Qwen3's per-head q/k RMSNorm runs inside a qk_norm range (kernels/torch_stacks since 2026-11-28's x2-c
// lease): attn_qkv's, each item marked. The reference RMSNorm launches 8 kernels (float cast, pow, mean,
// +eps, rsqrt, multiply, cast back, weight) and each layer calls it for q and for k: 16 marked forward items
// per layer, their gradients marked in backward, and nothing of any other op marked.
TEST(OpAttribution, PerHeadQueryKeyNormsAreAttnQkvsMarkedItems) {
  const AttributedStep s = attribute_step(load_torch_trace(
      std::string(MOESIM_DEVICE_STACKS) +
      "/2026-11-28-nvidia-h200-x2-c/ep2/"
      "qwen3-30b-a3b.grouped.ep2.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"));
  for (int layer = 0; layer < 2; ++layer) {
    for (bool backward : {false, true}) {
      const OpCall* qkv = s.find(layer, "attn_qkv", backward);
      ASSERT_NE(qkv, nullptr);
      int marked = 0, gemms = 0;
      for (const TracedItem& item : qkv->items) {
        marked += item.qk_norm;
        gemms += item.kind == TracedItem::Kind::LAUNCH && item.gpu.kind == GpuKind::GEMM && !item.qk_norm;
      }
      if (backward) {
        EXPECT_GE(marked, 16) << "layer " << layer;  // each kernel's gradient: one or more
      } else {
        EXPECT_EQ(marked, 16) << "layer " << layer;
      }
      EXPECT_GT(gemms, 0) << "layer " << layer;  // the projection stays unmarked
    }
  }
  for (const OpCall& c : s.calls) {
    if (c.op == "attn_qkv") continue;
    for (const TracedItem& item : c.items) EXPECT_FALSE(item.qk_norm) << c.op;
  }
}

// transformers' Qwen3MoeModel on an H200 (device data), training step: its layers carry module-hook ranges,
// its own code around them none. What runs before the first layer's range prepares the layers' inputs
// (positions, create_causal_mask's checks with one .item(), rotary cos/sin), the final RMSNorm has its own
// range (hf_stacks since 2026-11-28), so the last layer's residual add, just before it, stays the layer's,
// and between ranges the residual adds.
TEST(OpAttribution, TheForwardOutsideLayerRangesIsTheModelsOwnOps) {
#ifdef MOESIM_SANITIZED
  // Parsing the 46 MB trace takes 4 s in Release and about 900 s under ASan (CI logs of 2026-11-27): the
  // attribution itself runs under ASan in the tests of the small traces.
  GTEST_SKIP() << "runs in the Release suite only";
#endif
  const AttributedStep s = attribute_step(load_torch_trace(
      std::string(MOESIM_DEVICE_STACKS) +
      "/2026-11-28-nvidia-h200-x2-c/hf/"
      "qwen3-30b-a3b.hf-eager.ep1.t2048.s2048.l2.train.regular.balanced.rank0.trace.json.gz"));
  const auto cpu_ops = [&](int layer, const char* op, bool backward) {
    std::multiset<std::string> out;
    const OpCall* c = s.find(layer, op, backward);
    if (c == nullptr) return out;
    for (const TracedItem& item : c->items)
      out.insert(item.kind == TracedItem::Kind::SYNC ? "<sync>" : item.cpu_op);
    return out;
  };
  const auto inputs = cpu_ops(0, "model_inputs", false);
  EXPECT_EQ(inputs.count("<sync>"), 1u);  // the mask test's answer read back
  for (const char* op : {"aten::arange", "aten::cumsum", "aten::bmm", "aten::cos", "aten::sin"})
    EXPECT_GE(inputs.count(op), 1u) << op;
  const auto norm = cpu_ops(1, "final_norm", false);
  for (const char* op : {"aten::pow", "aten::mean", "aten::rsqrt"}) EXPECT_EQ(norm.count(op), 1u) << op;
  EXPECT_EQ(norm.count("aten::add"), 1u);  // the norm's epsilon
  EXPECT_FALSE(cpu_ops(1, "final_norm", true).empty());
  // The .item()'s CPU op carries the next autograd node's sequence number: that node stays its layer's.
  EXPECT_EQ(s.find(0, "model_inputs", true), nullptr);
  EXPECT_EQ(cpu_ops(0, "residual_add", false), (std::multiset<std::string>{"aten::add", "aten::add"}));
  EXPECT_EQ(cpu_ops(1, "residual_add", false), (std::multiset<std::string>{"aten::add", "aten::add"}));
}

TEST(OpAttribution, ProfilerInflationFromTheUntracedIssueTime) {
  AttributedStep s;
  s.host_us = 1000;
  s.wait_us = 200;
  // (600 us untraced - 200 blocked) / (1000 - 200) = 0.5
  EXPECT_DOUBLE_EQ(profiler_host_scale(s, 0.6)->forward, 0.5);
  EXPECT_FALSE(profiler_host_scale(s, 0).has_value());
  EXPECT_DOUBLE_EQ(profiler_host_scale(s, 5.0)->forward, 1.0);  // never above the traced time
  // Without a backward or a forward range the forward's issue time cannot split it: one factor for both.
  EXPECT_DOUBLE_EQ(profiler_host_scale(s, 0.6, 0.2)->backward, 0.5);
}

TEST(OpAttribution, ProfilerInflationPerPassWhenTheForwardsIssueTimeIsKnown) {
  AttributedStep s;
  s.has_backward = true;
  s.host_us = 1000;  // forward 400 (100 of it blocked), backward 600 (50 blocked)
  s.wait_us = 150;
  s.forward_host_us = 400;
  s.forward_wait_us = 100;
  const ProfilerHostScale scale = *profiler_host_scale(s, 0.7, 0.25);
  EXPECT_DOUBLE_EQ(scale.forward, (250.0 - 100) / (400 - 100));  // 0.5
  EXPECT_DOUBLE_EQ(scale.backward, (450.0 - 50) / (600 - 50));   // 0.727...
  EXPECT_DOUBLE_EQ(scale.of(true), scale.backward);
  EXPECT_TRUE(scale.per_pass);
  EXPECT_FALSE(profiler_host_scale(s, 0.7)->per_pass);
  EXPECT_DOUBLE_EQ(profiler_host_scale(s, 0.7)->forward, (700.0 - 150) / (1000 - 150));  // unknown: one
}

TEST(OpAttribution, TheForwardRangeEndsTheForwardsHostTime) {
  const AttributedStep s = attribute_step(load_torch_trace(kTrain + ".rank0.trace.json.gz"));
  EXPECT_GT(s.forward_host_us, 0);
  EXPECT_LT(s.forward_host_us, s.host_us);
  EXPECT_LE(s.forward_wait_us, s.wait_us);
}

// The step's host time is all somewhere: before an op's launch (autograd's first launch included, which pays
// for the loss and the engine starting up since the step thread's last launch), before a launch no op claims,
// blocked in a sync, or after the step's last launch (carried by the last pass's first launch). A learned
// profile then issues its traced step in the traced step's time.
TEST(OpAttribution, EveryMicrosecondOfTheStepsHostTimeIsAccountedFor) {
  for (const std::string& name : {kForward, kTrain}) {
    const AttributedStep s = attribute_step(load_torch_trace(name + ".rank0.trace.json.gz"));
    double host = s.unattributed_host_us + s.wait_us;
    for (const OpCall& c : s.calls)
      for (const TracedItem& item : c.items) host += item.host_us;
    EXPECT_NEAR(host / s.host_us, 1.0, 1e-6) << name;
  }
}

// A synchronize is blocked only while the GPU still runs what was launched before it: the rest of the call is
// the host's (the driver's round trip once the GPU has drained), which a faster host does faster. By hand: a
// 50 us kernel from 11 to 61 and a sync from 20 to 70 (blocked 41, own 9); a 2 us kernel from 81 to 83 and a
// sync from 90 to 96 (the GPU idle: blocked 0, own 6).
TEST(OpAttribution, ASyncIsBlockedOnlyWhileTheGpuRuns) {
  const TorchTrace t = parse_torch_trace(R"j({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "moesim.step", "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "moesim.L0.routed_experts", "tid": 1, "ts": 1, "dur": 98},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 10, "dur": 2,
     "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "k1", "ts": 11, "dur": 50, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "tid": 1, "ts": 20, "dur": 50},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 80, "dur": 2,
     "args": {"correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "k2", "ts": 81, "dur": 2, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "tid": 1, "ts": 90, "dur": 6}]})j",
                                         "t.json");
  const AttributedStep s = attribute_step(t);
  EXPECT_DOUBLE_EQ(s.wait_us, 41);
  ASSERT_EQ(s.calls.size(), 1u);
  std::vector<const TracedItem*> syncs;
  for (const TracedItem& item : s.calls.front().items)
    if (item.kind == TracedItem::Kind::SYNC) syncs.push_back(&item);
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_DOUBLE_EQ(syncs[0]->wait_us, 41);
  EXPECT_DOUBLE_EQ(syncs[0]->host_us, 10 + 9);  // since the launch at 10, and its own 9 us
  EXPECT_DOUBLE_EQ(syncs[1]->wait_us, 0);
  EXPECT_DOUBLE_EQ(syncs[1]->host_us, 10 + 6);  // since the launch at 80
}

// A host far ahead of its GPU fills the launch queue; a launch then waits in its call for a kernel to end. By
// hand: kernels of 1,000 us back to back from 11, launched every 10 us from 0 in calls of 2 us (the median),
// so the n-th launch has about n queued; launch `at` takes 5,000 us. Launch 900 (891 queued, at 9,000)
// returns at 14,000, after kernel 12 ended at 13,011: it waited 4,011 us, the GPU's pace, and the next
// launch's host time counts from there (14,010 - 13,011). With 99 queued (launch 100) the queue is not full:
// no wait.
TEST(OpAttribution, ALaunchAtAFullQueueWaitsForTheGpu) {
  const auto traced = [](int at) {
    std::string events =
        R"j({"ph": "X", "cat": "user_annotation", "name": "moesim.step", "tid": 1, "ts": 0, "dur": 20000},
            {"ph": "X", "cat": "user_annotation", "name": "moesim.L0.routed_experts", "tid": 1, "ts": 0,
             "dur": 20000})j";
    double ts = 0;
    for (int i = 0; i <= at + 1; ++i) {
      const double dur = i == at ? 5000 : 2;
      const std::string id = std::to_string(i + 1);
      events += R"j(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": )j" +
                std::to_string(ts) + R"j(, "dur": )j" + std::to_string(dur) +
                R"j(, "args": {"correlation": )j" + id +
                R"j(}}, {"ph": "X", "cat": "kernel", "name": "k", "ts": )j" +
                std::to_string(11 + 1000.0 * i) + R"j(, "dur": 1000, "args": {"correlation": )j" + id + "}}";
      ts += i == at ? 5010 : 10;
    }
    return attribute_step(parse_torch_trace(R"j({"traceEvents": [)j" + events + "]}", "t.json"));
  };
  const AttributedStep full = traced(900);
  EXPECT_DOUBLE_EQ(full.wait_us, 13011 - 9000);
  EXPECT_EQ(full.full_queue_launches, 1);
  EXPECT_DOUBLE_EQ(full.full_queue_wait_us, full.wait_us);
  const std::vector<TracedItem>& items = full.calls.front().items;
  ASSERT_EQ(items.size(), 902u);
  EXPECT_DOUBLE_EQ(items[901].host_us, 14010 - 13011);
  const AttributedStep shallow = traced(100);
  EXPECT_DOUBLE_EQ(shallow.wait_us, 0);
  EXPECT_EQ(shallow.full_queue_launches, 0);
  EXPECT_DOUBLE_EQ(shallow.calls.front().items[101].host_us, 5010);
}

TEST(TorchStackRecord, ReadsConfigurationTimingAndTraces) {
  const TorchStackRecord r = read_torch_stack_record(kTrain + ".json");
  EXPECT_EQ(r.model, "qwen3-30b-a3b");
  EXPECT_EQ(r.style, "grouped");
  EXPECT_EQ(r.schedule, "farskip");
  EXPECT_EQ(r.phase, "train");
  EXPECT_EQ(r.ep, 2);
  EXPECT_EQ(r.tokens, 256);
  EXPECT_EQ(r.scale, 8);
  EXPECT_EQ(r.shape.hidden, 256);
  EXPECT_EQ(r.shape.attention, "gqa");
  EXPECT_GT(r.step_ms_p50, 0);
  EXPECT_GT(r.issue_ms_p50, 0);
  EXPECT_NE(r.device.find("H100"), std::string::npos);
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_EQ(record_beside_trace(r.traces.front()), kTrain + ".json");
}

TEST(TorchStackRecord, ReadsAnInterleavedPairsSpeedup) {
  nlohmann::json doc = parse_json_text(read_trace_text(kTrain + ".json"), "t.json");
  EXPECT_FALSE(torch_stack_record_from_json(doc, "t.json").speedup.has_value());  // timed alone
  doc["timing"]["speedup"] = {{"estimate", 1.02}, {"ci95", {1.01, 1.04}}};
  const auto speedup = torch_stack_record_from_json(doc, "t.json").speedup;
  ASSERT_TRUE(speedup.has_value());
  EXPECT_EQ(speedup->estimate, 1.02);
  EXPECT_EQ(speedup->low, 1.01);
  EXPECT_EQ(speedup->high, 1.04);
  doc["timing"]["speedup"]["ci95"] = {1.01};
  try {
    torch_stack_record_from_json(doc, "t.json");
    FAIL() << "a one-number interval was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /timing/speedup/ci95"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moesim::traces
