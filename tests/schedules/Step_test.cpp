// Whole steps: pipeline schedules against their textbook bubble, and two-batch overlap's interleaving.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "moesim/common/Error.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/ScenarioFlags.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

/**
 * Qwen3-30B-A3B training (every layer MoE, so stages of equal layer counts are uniform) on one 8-GPU H100
 * node with the contention terms off: stage-to-stage activations (16 MiB over NVLink, ~0.05 ms) are small
 * next to a stage's chunk (~13 ms), so communication between stages is nearly free.
 */
Scenario pipelined(int ep, int pp, int micro_batches, int layers) {
  Scenario s;
  s.model = models::load_model("qwen3-30b-a3b");
  s.hw = hw::load_profile("h100");
  s.hw.contention.comm_sms = 0;
  s.hw.contention.compute_slowdown_with_comm = 1.0;
  s.hw.contention.comm_slowdown_with_compute = 1.0;
  s.hw.contention.hbm_bytes_per_comm_byte = 0;
  s.hw.contention.hbm_bytes_per_copy_byte = 0;
  s.schedule = "regular";
  s.parallel.ep = ep;
  s.parallel.pp = pp;
  s.workload.phase = Phase::TRAIN;
  s.workload.tokens = 4096;
  s.workload.seq_len = 4096;
  s.workload.layers = layers;
  s.workload.micro_batches = micro_batches;
  return s;
}

double bubble_pct(const SimulationResult& r) {
  const FigureGroup* step = r.figure_group("step");
  EXPECT_NE(step, nullptr);
  return step ? step->number("bubble_pct").value_or(-1) : -1;
}

/** [start, end) in ns of rank 0's op named `name`; fails the test when there is none. */
std::pair<sim::TimeNs, sim::TimeNs> span(const SimulationResult& r, const std::string& name) {
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank == 0 && ops[i].name == name) return {r.run.ops[i].start, r.run.ops[i].end};
  }
  ADD_FAILURE() << "no op " << name;
  return {0, 0};
}

bool overlaps(std::pair<sim::TimeNs, sim::TimeNs> a, std::pair<sim::TimeNs, sim::TimeNs> b) {
  return a.first < b.second && b.first < a.second;
}

}  // namespace

// Uniform stages, free communication: 1F1B's step is (m + p - 1) stage chunks (F + B) and every stage idles
// (p - 1) of them, a bubble of (p - 1)/(m + p - 1) (Narayanan et al., SC'21, §2.2).
TEST(Pipeline, OneFOneBStepIsMPlusPMinusOneChunksWithTheTextbookBubble) {
  struct Case {
    int ep, pp, micro_batches;
  };
  for (const Case c : {Case{4, 2, 4}, Case{4, 2, 8}, Case{2, 4, 8}}) {
    const int per_stage = 2;
    Scenario stage = pipelined(c.ep, 1, 1, per_stage);
    const double chunk_ms = simulate(stage).step_ms;  // F + B of one stage's layers for one micro-batch
    const auto r = simulate(pipelined(c.ep, c.pp, c.micro_batches, per_stage * c.pp));
    const double expected_ms = (c.micro_batches + c.pp - 1) * chunk_ms;
    EXPECT_NEAR(r.step_ms, expected_ms, 0.01 * expected_ms) << "pp " << c.pp << " m " << c.micro_batches;
    const double expected_bubble = 100.0 * (c.pp - 1) / (c.micro_batches + c.pp - 1);
    EXPECT_NEAR(bubble_pct(r), expected_bubble, 1.0) << "pp " << c.pp << " m " << c.micro_batches;
  }
}

// A pipeline's forward-only step (`--phase forward` with stages) frees each micro-batch's graph once its
// stage has run and sent the chunk on: per micro-batch, the profile's cost per forward launch times that
// chunk's launches, named after the stage's last layer; with no graph cost, nothing.
TEST(Pipeline, AForwardOnlyStepFreesEachMicroBatchsGraph) {
  Scenario s = pipelined(2, 2, 4, 4);
  s.workload.phase = Phase::FORWARD;
  auto profile = std::make_shared<cost::ImplementationProfile>(cost::load_implementation("grouped"));
  profile->graph_free_us_per_launch = 50;
  s.impl = profile;
  const auto r = simulate(s);
  for (const int rank : {0, 2}) {  // stage 0 (layers 0-1) and stage 1 (layers 2-3), EP 2
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::map<int, int> launches;  // micro-batch -> forward kernels
    std::map<int, const sim::Op*> frees;
    for (const sim::Op& op : r.program->ops()) {
      if (op.rank != rank) continue;
      if (op.kind == sim::OpKind::KERNEL && !op.origin.backward) ++launches[op.origin.micro_batch];
      if (op.name.ends_with("autograd_graph_free")) {
        EXPECT_EQ(frees.count(op.origin.micro_batch), 0u);
        frees[op.origin.micro_batch] = &op;
      }
    }
    ASSERT_EQ(frees.size(), 4u);
    for (const auto& [micro_batch, op] : frees) {
      EXPECT_GT(launches.at(micro_batch), 20);
      EXPECT_NEAR(op->host_ns, 50e3 * launches.at(micro_batch), 1e-6) << micro_batch;
      EXPECT_EQ(op->origin.layer, rank == 0 ? 1 : 3);
    }
  }
  profile->graph_free_us_per_launch = 0;
  profile->base.reset();
  const auto without = simulate(s);
  for (const sim::Op& op : without.program->ops()) EXPECT_FALSE(op.name.ends_with("autograd_graph_free"));
}

// Without stages, micro-batches are gradient accumulation: m times one micro-batch's stack, no bubble.
TEST(Pipeline, MicroBatchesWithoutStagesAccumulate) {
  const double one = simulate(pipelined(8, 1, 1, 3)).step_ms;
  const auto r = simulate(pipelined(8, 1, 3, 3));
  EXPECT_NEAR(r.step_ms, 3 * one, 0.005 * 3 * one);
  EXPECT_LT(bubble_pct(r), 0.5);
}

// Interleaving V model chunks per stage divides the bubble time by V: (p - 1)(F + B)/V over a step of
// m(F + B) + that, with F + B a whole stage's chunk (p = 2, V = 2, m = 4: 11.1% against 1F1B's 20%).
TEST(Pipeline, InterleavedStagesDivideTheBubbleByV) {
  Scenario s = pipelined(4, 2, 4, 8);
  s.parallel.vpp = 2;
  s.pp_schedule = "interleaved";
  const auto interleaved = simulate(s);
  const double stage_ms = simulate(pipelined(4, 1, 1, 4)).step_ms;
  const double bubble_ms = (2 - 1) * stage_ms / 2;
  EXPECT_NEAR(interleaved.step_ms, 4 * stage_ms + bubble_ms, 0.015 * (4 * stage_ms + bubble_ms));
  EXPECT_NEAR(bubble_pct(interleaved), 100.0 * 0.5 / 4.5, 1.0);
  EXPECT_NEAR(bubble_pct(simulate(pipelined(4, 2, 4, 8))), 20.0, 1.0);
}

TEST(Pipeline, RejectsWhatItCannotSchedule) {
  Scenario s = pipelined(4, 2, 3, 8);
  s.parallel.vpp = 2;
  s.pp_schedule = "interleaved";
  EXPECT_THROW(simulate(s), ScheduleError);  // m = 3 is not a multiple of p = 2 (Megatron's rule)
  s = pipelined(4, 2, 4, 1);
  EXPECT_THROW(simulate(s), ScheduleError);  // two stages of one layer
}

// Two-batch overlap: each half's attention runs while the other half's Dispatch is in flight, and its experts
// while the other's Combine is; the compute stream alternates halves layer by layer.
TEST(TwoBatchOverlap, OneHalfComputesUnderTheOtherHalfsAllToAll) {
  Scenario s = pipelined(8, 1, 1, 2);
  s.schedule = "tbo";
  s.workload.phase = Phase::PREFILL;
  s.workload.tokens = 8192;
  s.options["sync_splits"] = "off";
  const auto r = simulate(s);
  EXPECT_TRUE(overlaps(span(r, "a.L0.dispatch"), span(r, "b.L0.attn_core.flash_fwd")));
  EXPECT_TRUE(overlaps(span(r, "b.L0.dispatch"), span(r, "a.L0.routed_experts.fc1")));
  EXPECT_TRUE(overlaps(span(r, "a.L0.combine"), span(r, "b.L0.routed_experts.fc1")));
  // Compute order: a's attention, b's attention, a's experts, b's experts, then layer 1 the same way.
  EXPECT_LT(span(r, "a.L0.attn_core.flash_fwd").second, span(r, "b.L0.attn_core.flash_fwd").first);
  EXPECT_LT(span(r, "b.L0.attn_core.flash_fwd").second, span(r, "a.L0.routed_experts.fc1").first);
  EXPECT_LT(span(r, "a.L0.routed_experts.fc1").second, span(r, "b.L0.routed_experts.fc1").first);
  EXPECT_LT(span(r, "b.L0.routed_experts.fc1").second, span(r, "a.L1.attn_core.flash_fwd").first);
  // Hiding the all-to-alls makes the step shorter than the same tokens without the split.
  Scenario regular = s;
  regular.schedule = "regular";
  regular.options.clear();
  regular.options["sync_splits"] = "off";
  EXPECT_LT(r.step_ms, simulate(regular).step_ms);
}

// ZeRO-1 over two replicas of an EP-8 stage: Qwen3-30B-A3B's routed experts, 128 x 3 x 2048 x 768 =
// 603,979,776 weights a layer, 75,497,472 on each of 8 ranks, reduce-scatter their 16-bit gradients over the
// 2 replicas, one bucket a layer (each past Megatron's 40M-parameter bucket); the dense weights' group is the
// 8 EP ranks of both replicas (16). Adam starts once every reduction is done.
TEST(DataParallel, ZeroOneReducesEachLayersExpertGradientsOverTheReplicas) {
  Scenario s = pipelined(8, 1, 2, 2);
  s.parallel.dp = 2;
  s.optimizer = Optimizer::ZERO1;
  const auto r = simulate(s);
  int expert_buckets = 0, dense_buckets = 0, gathers = 0;
  for (const sim::CollectiveSpec& c : r.program->collectives()) {
    if (c.name.rfind("dp.grad_reducescatter", 0) == 0) {
      if (c.group.size() == 2) {
        ++expert_buckets;
        EXPECT_DOUBLE_EQ(c.bytes, 75'497'472.0 * 2) << c.name;
        EXPECT_EQ(c.group[1] - c.group[0], 8) << "replica 1's rank of the same EP index";
      } else {
        ++dense_buckets;
        EXPECT_EQ(c.group.size(), 16u) << c.name;
      }
    }
    if (c.name.rfind("dp.param_allgather", 0) == 0) ++gathers;
  }
  EXPECT_EQ(expert_buckets, 2);
  EXPECT_EQ(dense_buckets, 1);  // 2 layers x ~19M dense weights fit one 40M bucket
  EXPECT_EQ(gathers, 3);
  sim::TimeNs last_reduction = 0, adam_start = -1;
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank != 0) continue;
    if (ops[i].category == "dp_reducescatter") last_reduction = std::max(last_reduction, r.run.ops[i].end);
    if (ops[i].name == "optimizer.adam") adam_start = r.run.ops[i].start;
  }
  EXPECT_GE(adam_start, last_reduction);
  EXPECT_GT(last_reduction, 0);
}

// DualPipe on 4 stages, 8 micro-batches (2 x pp, its least): in the steady state a stage runs the forward
// chunk of one micro-batch and the backward chunk of another as one overlapped pair, so on stage 0 some
// forward compute of micro-batch a runs while an all-to-all of micro-batch b's backward is in flight.
TEST(DualPipe, AStageInterleavesAForwardAndABackwardChunkOfTwoMicroBatches) {
  Scenario s = pipelined(4, 4, 8, 8);
  s.pp_schedule = "dualpipe";
  const auto r = simulate(s);
  const auto& ops = r.program->ops();
  bool interleaved = false;
  for (std::size_t i = 0; i < ops.size() && !interleaved; ++i) {
    const sim::Op& comm = ops[i];
    if (comm.rank != 0 || !comm.is_comm() || !comm.origin.backward || comm.category.rfind("dispatch", 0) != 0)
      continue;
    for (std::size_t j = 0; j < ops.size() && !interleaved; ++j) {
      const sim::Op& compute = ops[j];
      if (compute.rank != 0 || compute.kind != sim::OpKind::KERNEL || compute.origin.backward ||
          compute.origin.micro_batch < 0 || compute.origin.micro_batch == comm.origin.micro_batch)
        continue;
      interleaved = overlaps({r.run.ops[i].start, r.run.ops[i].end}, {r.run.ops[j].start, r.run.ops[j].end});
    }
  }
  EXPECT_TRUE(interleaved) << "no forward kernel of one micro-batch under another's backward dispatch";
}

// DualPipe's bubble (DeepSeek-V3 report, Table 2): (P/2 - 1)(F&B + B - 3W) against 1F1B's (P - 1)(F + B),
// per stage, with F, B the chunk times of one part. F&B <= F + B and B <= F + B, so DualPipe idles at most
// (P - 2)(F + B) of a step of m (F + B) + bubble: at P = 4, m = 8, below 2/10 = 20%, and 1F1B idles
// 3/11 = 27.3%. At P = 2 DualPipe's bubble term vanishes: both directions fill the two stages from the start.
TEST(DualPipe, ItsBubbleIsBelowOneFOneBsForTheSameStagesAndMicroBatches) {
  struct Case {
    int pp, micro_batches;
  };
  for (const Case c : {Case{4, 8}, Case{2, 4}}) {
    Scenario dual = pipelined(4, c.pp, c.micro_batches, 2 * c.pp);
    dual.pp_schedule = "dualpipe";
    const double dualpipe = bubble_pct(simulate(dual));
    const double one_f_one_b = bubble_pct(simulate(pipelined(4, c.pp, c.micro_batches, 2 * c.pp)));
    const double bound = 100.0 * (c.pp - 2) / (c.micro_batches + c.pp - 2);
    // The textbook form has free transfers; at P = 4 x EP 4 the 16 ranks span two 8-GPU nodes and the
    // stage chunks' activations (4096 x 2048 bf16, 16.8 MB) cross a 50 GB/s NIC once each way (0.34 ms) and
    // NVLink twice each way (about 0.1 ms): about 1.1 ms more idling on a 136 ms step (11 chunks of
    // 12.4 ms), 0.8 points.
    EXPECT_NEAR(one_f_one_b, 100.0 * (c.pp - 1) / (c.micro_batches + c.pp - 1), 1.5) << "pp " << c.pp;
    EXPECT_LT(dualpipe, bound + 1.0) << "pp " << c.pp;
    EXPECT_LT(dualpipe, one_f_one_b) << "pp " << c.pp;
  }
}

namespace {
/** DeepSeek-V2-Lite decoding on 8 H100 (EP8): `batch` sequences a rank after 1,024 cached keys, 2 layers
 * (one dense, one MoE), MTP on or off. */
SimulationResult decode(int batch, bool mtp) {
  ScenarioFlags f;
  f.model = "deepseek-v2-lite";
  f.hw = "h100";
  f.phase = "decode";
  f.mbs = batch;
  f.kv_len = 1024;
  f.layers = 2;
  f.power = "off";
  f.mtp = mtp;
  return simulate(make_scenario(f));
}

/** Sum over rank 0's kernels of `block` in layer `layer` of their tensor work (FLOPs at the dense peak). */
double peak_ns(const SimulationResult& r, int layer, const std::string& block) {
  double total = 0;
  const auto& ops = r.program->ops();
  for (const sim::Op& op : ops) {
    if (op.rank == 0 && op.origin.layer == layer && op.origin.block == block) total += op.work.peak_ns;
  }
  return total;
}
}  // namespace

// MTP verifies the drafted token with the next one: each sequence puts 2 tokens through every layer instead
// of 1, so the MoE layer's routed-expert GEMMs do exactly twice the FLOPs (balanced routing: 2 x 64 x 6 / 64
// rows per local expert instead of 64 x 6 / 64) and Dispatch carries twice the bytes; a step completes
// 1 + 0.85 tokens a sequence (the default acceptance) instead of 1: 8 ranks x 64 x 1.85 = 947.2 tokens.
TEST(Decode, MtpDoublesTheTokensThroughTheLayersAndCountsTheAcceptedDrafts) {
  const auto off = decode(64, false), on = decode(64, true);
  const double experts_off = peak_ns(off, 1, "routed_experts");
  ASSERT_GT(experts_off, 0);
  EXPECT_NEAR(peak_ns(on, 1, "routed_experts") / experts_off, 2.0, 1e-9);
  double dispatch_off = 0, dispatch_on = 0;
  for (const auto* r : {&off, &on}) {
    for (const sim::CollectiveSpec& c : r->program->collectives())
      if (c.name.find("dispatch") != std::string::npos) {
        for (const auto& row : c.pairs())
          for (double bytes : row) (r == &off ? dispatch_off : dispatch_on) += bytes;
      }
  }
  ASSERT_GT(dispatch_off, 0);
  EXPECT_NEAR(dispatch_on / dispatch_off, 2.0, 1e-9);
  EXPECT_NEAR(off.tokens_per_s * off.step_ms / 1e3, 8 * 64.0, 1e-6);
  EXPECT_NEAR(on.tokens_per_s * on.step_ms / 1e3, 8 * 64 * 1.85, 1e-6);
  // The extra token costs time, but less than a batch of twice the sequences, whose attention also reads
  // twice the KV cache.
  EXPECT_GT(on.step_ms, off.step_ms);
  EXPECT_LT(on.step_ms, decode(128, false).step_ms);
}

// A step's chunks run Dispatch and Combine as the layer schedule's options say: with a2a=hierarchical over
// two nodes (EP16) the legs go RDMA then NVLink, on a stream of their own, in 1F1B steps and in TBO's halves.
TEST(Pipeline, StepsRunTheHierarchicalAllToAllTheyAreAskedFor) {
  for (const std::string schedule : {"regular", "tbo"}) {
    Scenario s = pipelined(16, 2, 2, 4);
    s.workload.seq_len = 2048;  // two sequences a rank: TBO's halves
    s.schedule = schedule;
    s.options["a2a"] = "hierarchical";
    const auto r = simulate(s);
    const auto& streams = r.program->streams(0);
    EXPECT_NE(std::find(streams.begin(), streams.end(), "comm.nvlink"), streams.end()) << schedule;
  }
}

// A model's own ops in a pipelined step (an implementation profile that runs them: transformers'): every
// micro-batch prepares its inputs once, on the stage that holds the first layer, and runs its final norm and
// that norm's gradient once, on the stage that holds the last; 1F1B and DualPipe's paired chunks alike.
TEST(Pipeline, EveryMicroBatchRunsTheModelsOwnOpsOnceOnTheEndStages) {
  const auto impl = std::make_shared<cost::ImplementationProfile>(cost::load_implementation("hf-eager"));
  const auto launches = [&](models::LayerOp op, cost::ImplPass pass) {
    int n = 0;
    for (const auto& step : impl->find(op, pass, models::AttentionType::GQA)->steps)
      n += step.kind != cost::ImplStepKind::SYNC;
    return n;
  };
  const std::map<std::string, int> per_call = {
      {"model_inputs", launches(models::LayerOp::MODEL_INPUTS, cost::ImplPass::FORWARD)},
      {"final_norm", launches(models::LayerOp::FINAL_NORM, cost::ImplPass::FORWARD)},
      {"final_norm.bwd", launches(models::LayerOp::FINAL_NORM, cost::ImplPass::BACKWARD)}};
  for (const char* schedule : {"1f1b", "dualpipe"}) {
    Scenario s = pipelined(2, 4, 8, 8);
    s.pp_schedule = schedule;
    s.impl = impl;
    const auto r = simulate(s);
    // (op, micro-batch) -> rank -> kernels
    std::map<std::pair<std::string, int>, std::map<int, int>> kernels;
    for (const auto& op : r.program->ops()) {
      if (op.kind != sim::OpKind::KERNEL) continue;
      if (op.origin.block != "model_inputs" && op.origin.block != "final_norm") continue;
      ++kernels[{op.origin.block + (op.origin.backward ? ".bwd" : ""), op.origin.micro_batch}][op.rank];
    }
    EXPECT_EQ(kernels.size(), 3u * 8u) << schedule;  // three ops, eight micro-batches
    for (const auto& [key, by_rank] : kernels) {
      // One stage runs it: balanced routing simulates one rank of each stage's EP group for all of them.
      EXPECT_EQ(by_rank.size(), 1u) << schedule << " " << key.first << " micro-batch " << key.second;
      for (const auto& [rank, n] : by_rank)
        EXPECT_EQ(n, per_call.at(key.first)) << schedule << " " << key.first;
    }
  }
}
