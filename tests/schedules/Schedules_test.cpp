// Schedule-level properties of the regular and FarSkip DAGs on the engine.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "moesim/common/Error.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"
#include "moesim/schedules/Simulation.hpp"

using namespace moesim;
using namespace moesim::schedules;

namespace {

Scenario training(const std::string& schedule, Phase phase = Phase::FORWARD, int layers = 6,
                  std::int64_t seq = 4096) {
  Scenario s;
  s.model = models::load_model("deepseek-v2-lite");
  s.hw = hw::load_profile("mi325x");
  s.schedule = schedule;
  s.parallel.ep = 8;
  s.workload.phase = phase;
  s.workload.tokens = 8192;
  s.workload.seq_len = seq;
  s.workload.layers = layers;
  return s;
}

/** vLLM-style prefill: TP = EP = `gpus`, every rank holding all `tokens` in sequences of `seq`. */
Scenario tp_prefill(const std::string& model, const std::string& hw, int gpus, std::int64_t tokens,
                    std::int64_t seq, int layers) {
  Scenario s;
  s.model = models::load_model(model);
  s.hw = hw::load_profile(hw);
  s.parallel.ep = gpus;
  s.parallel.tp = gpus;
  s.parallel.moe_comm = MoeComm::ALLREDUCE;
  s.workload.phase = Phase::PREFILL;
  s.workload.tokens = tokens;
  s.workload.seq_len = seq;
  s.workload.layers = layers;
  return s;
}

/** The profile with every contention term switched off: comm takes no SMs and slows nothing. */
void without_contention(Scenario& s) {
  s.hw.contention.comm_sms = 0;
  s.hw.contention.compute_slowdown_with_comm = 1.0;
  s.hw.contention.comm_slowdown_with_compute = 1.0;
  s.hw.contention.hbm_bytes_per_comm_byte = 0;
  s.hw.contention.hbm_bytes_per_copy_byte = 0;
}

/** rank-0 time (ms) of the named collective, data phase only. */
double comm_ms(const SimulationResult& r, const std::string& name) {
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank == 0 && ops[i].is_comm() && ops[i].name == name) {
      return static_cast<double>(r.run.ops[i].end - r.run.ops[i].start) / 1e6;
    }
  }
  return -1;
}

/** rank-0 time (ms) of the named op. */
double op_ms(const SimulationResult& r, const std::string& name) {
  const auto& ops = r.program->ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rank == 0 && ops[i].name == name)
      return static_cast<double>(r.run.ops[i].end - r.run.ops[i].start) / 1e6;
  }
  ADD_FAILURE() << "no op " << name;
  return -1;
}

}  // namespace

TEST(FarSkip, HidesDispatchAndCombineWhenContentionIsOff) {
  // One 8192-token sequence per rank: core attention (quadratic in seq) is longer than Dispatch and shared
  // experts + the next qkv longer than Combine (checked below), so with no contention every collective fits
  // its window. Only the last layer's Combine has nothing after it (§4.1).
  Scenario s = training("farskip", Phase::FORWARD, 6, 8192);
  without_contention(s);
  s.options["sync_splits"] = "off";
  auto r = simulate(s);
  const FigureGroup* eq9 = r.figure_group("farskip_eq9");
  ASSERT_NE(eq9, nullptr);
  ASSERT_EQ(eq9->number("holds"), 1.0) << "precondition: comm shorter than the overlappable compute";
  double last_combine = comm_ms(r, "L5.combine");
  ASSERT_GT(last_combine, 0);
  double hidden = (r.comm_ms - r.exposed_comm_ms) / (r.comm_ms - last_combine);
  EXPECT_GE(hidden, 0.95) << "comm " << r.comm_ms << " exposed " << r.exposed_comm_ms << " last combine "
                          << last_combine;
}

TEST(FarSkip, ContentionErodesWhatOverlapSaves) {
  // With the shipped profile a comm kernel holds comm_sms of the SMs and the compute beside it also slows by
  // compute_slowdown_with_comm; comm slows by comm_slowdown_with_compute. Hiding the comm therefore buys
  // less: the FarSkip step gets longer and its speedup over the blocking schedule (which runs no compute
  // under comm, so feels no contention) drops. The extra compute time can be no more than the overlapped time
  // times the SM stretch factor minus one: stretch = slowdown · SMs / (SMs − comm_sms).
  Scenario with = training("farskip", Phase::FORWARD, 6, 8192);
  Scenario without = with;
  without_contention(without);
  ASSERT_GT(with.hw.contention.comm_sms, 0);
  ASSERT_GT(with.hw.contention.comm_slowdown_with_compute, 1.0);
  auto a = simulate(with);
  auto b = simulate(without);
  Scenario blocking = with;
  blocking.schedule = "regular";
  blocking.options["shared_overlap"] = "off";
  const double regular = simulate(blocking).step_ms;
  EXPECT_GT(a.step_ms, b.step_ms);
  EXPECT_LT(regular / a.step_ms, regular / b.step_ms);
  const auto& c = with.hw.contention;
  const double sms = with.hw.gpu.sm_count;
  const double stretch = c.compute_slowdown_with_comm * sms / (sms - c.comm_sms);
  EXPECT_GT(a.compute_ms, b.compute_ms);
  EXPECT_LE(a.compute_ms - b.compute_ms, a.comm_ms * (stretch - 1.0) * 1.01);
  EXPECT_GT(a.comm_ms, b.comm_ms);  // comm under compute runs slower
}

TEST(FarSkip, CopyEngineAllToAllCostsTheHostOneCopyLaunchPerDestination) {
  // EP 4, balanced routing: every rank sends bytes to all 4 ranks (itself included), so a copy-engine
  // all-to-all issues 4 copies: 4 x 7 us of host time; an NCCL all-to-all is one kernel launch.
  for (const char* transport : {"copy_engine", "nccl"}) {
    Scenario s = training("farskip", Phase::FORWARD, 3);  // layer 0 is dense: 2 MoE layers
    s.hw = hw::load_profile("h200.calibrated");
    s.parallel.ep = 4;
    s.hw.gpu.copy_launch_overhead_s = 7e-6;
    s.options["transport"] = transport;
    const auto r = simulate(s);
    const double expected = std::string(transport) == "nccl" ? s.hw.gpu.launch_overhead_s * 1e9 : 4 * 7000.0;
    int collectives = 0;
    for (const auto& op : r.program->ops()) {
      if (op.rank != 0 || op.kind != sim::OpKind::COLLECTIVE) continue;
      EXPECT_DOUBLE_EQ(op.host_ns, expected) << transport << " " << op.name;
      ++collectives;
    }
    EXPECT_EQ(collectives, 4) << transport;  // Dispatch and Combine of 2 layers
  }
}

TEST(Regular, WithoutSharedOverlapEveryCollectiveIsExposed) {
  // Each collective is waited for by the next compute op and nothing else runs meanwhile: overlap is 0.
  for (Phase p : {Phase::FORWARD, Phase::TRAIN}) {
    Scenario s = training("regular", p, 3);
    s.options["shared_overlap"] = "off";
    auto r = simulate(s);
    EXPECT_GT(r.comm_ms, 0);
    EXPECT_NEAR(r.exposed_comm_ms, r.comm_ms, 1e-9);
    EXPECT_DOUBLE_EQ(r.overlap_pct, 0.0);
  }
}

TEST(FarSkip, SimpleModeOverlapsNothing) {
  // Primus' simple FarSkip layer: FarSkip wiring but each collective is awaited at once.
  Scenario s = training("farskip", Phase::TRAIN, 3);
  s.options["mode"] = "simple";
  auto r = simulate(s);
  EXPECT_DOUBLE_EQ(r.overlap_pct, 0.0);
  Scenario overlapped = training("farskip", Phase::TRAIN, 3);
  EXPECT_LT(simulate(overlapped).step_ms, r.step_ms);
}

TEST(FarSkip, ConvertingFewerLayersGivesLessSpeedup) {
  Scenario base = training("regular", Phase::TRAIN, 6);
  base.options["shared_overlap"] = "off";
  double regular = simulate(base).step_ms;
  auto speedup = [&](const std::string& layers) {
    Scenario s = training("farskip", Phase::TRAIN, 6);
    s.options["layers"] = layers;
    s.options["shared_overlap"] = "off";
    return regular / simulate(s).step_ms;
  };
  double last2 = speedup("last:2"), last4 = speedup("last:4"), all = speedup("all");
  EXPECT_GT(last2, 1.0);
  EXPECT_GT(last4, last2);
  EXPECT_GT(all, last4);
}

TEST(Simulation, SymmetricFastPathEqualsPerRankSimulation) {
  for (const char* schedule : {"regular", "farskip"}) {
    Scenario s = training(schedule, Phase::TRAIN, 3);
    auto fast = simulate(s);
    s.per_rank = true;
    auto full = simulate(s);
    ASSERT_TRUE(fast.symmetric);
    ASSERT_FALSE(full.symmetric);
    EXPECT_EQ(fast.run.makespan_ns, full.run.makespan_ns) << schedule;
    EXPECT_DOUBLE_EQ(fast.exposed_comm_ms, full.exposed_comm_ms) << schedule;
  }
}

TEST(Simulation, SkewedRoutingIsSimulatedPerRankAndIsSlower) {
  Scenario s = training("regular", Phase::FORWARD, 3);
  auto balanced = simulate(s);
  s.workload.routing = models::parse_routing("zipf:1.2");
  auto skewed = simulate(s);
  EXPECT_FALSE(skewed.symmetric);
  EXPECT_EQ(skewed.ranks.size(), 8u);
  EXPECT_GT(skewed.step_ms, balanced.step_ms);
}

TEST(Simulation, SameInputsSameTimings) {
  Scenario s = training("farskip", Phase::TRAIN, 2);
  s.workload.routing = models::parse_routing("uniform");
  auto a = simulate(s);
  auto b = simulate(s);
  ASSERT_EQ(a.run.ops.size(), b.run.ops.size());
  for (std::size_t i = 0; i < a.run.ops.size(); ++i) {
    ASSERT_EQ(a.run.ops[i].start, b.run.ops[i].start);
    ASSERT_EQ(a.run.ops[i].end, b.run.ops[i].end);
  }
}

TEST(Prefill, FarSkipOverlapsBothAllReduces) {
  // vLLM style, TP = EP = 8, 16 requests of 1024 tokens replicated on every rank (FarSkip §5.2 setting).
  Scenario s = tp_prefill("llama4-scout", "mi300x", 8, 16 * 1024, 1024, 4);
  s.workload.dtype = models::DType::FP8;
  s.schedule = "regular";
  auto regular = simulate(s);
  s.schedule = "farskip";
  auto farskip = simulate(s);
  // Regular waits for every all-reduce; FarSkip keeps the GPU busy under them, so its step approaches the
  // larger of total comm and total compute (the comm stream is one in-order queue), never below it.
  EXPECT_DOUBLE_EQ(regular.overlap_pct, 0.0);
  EXPECT_GT(farskip.overlap_pct, 50.0);
  EXPECT_LT(farskip.step_ms, regular.step_ms);
  EXPECT_GE(farskip.step_ms, std::max(farskip.comm_ms, farskip.compute_ms));
}

TEST(Prefill, FarSkipNormsReadTheSkippedInputsTheySum) {
  // FarSkip's attention input adds the MoE outputs before l-1 and its MoE input those plus MoE_{l-1}, summed
  // inside the norms: from layer 1 the attention norm reads 2 activation tensors and writes 1 (3 against
  // regular's 2), the MoE norm reads 3 (4 against 2). Layer 0 has nothing pending.
  Scenario s = tp_prefill("qwen3-30b-a3b", "h200", 4, 2048, 2048, 2);
  auto norm_bytes = [&](const std::string& name) {
    const auto r = simulate(s);
    for (const auto& op : r.program->ops()) {
      if (op.rank == 0 && op.name == name) return op.work.hbm_bytes;
    }
    return -1.0;
  };
  const double activations_rw = 2.0 * 2048 * s.model.hidden * 2;  // bf16 read + write
  for (const std::string schedule : {"regular", "farskip"}) {
    s.schedule = schedule;
    const bool farskip = schedule == "farskip";
    EXPECT_DOUBLE_EQ(norm_bytes("L0.attn_norm.rmsnorm"), activations_rw) << schedule;
    EXPECT_DOUBLE_EQ(norm_bytes("L0.mlp_norm.rmsnorm"), activations_rw) << schedule;
    EXPECT_DOUBLE_EQ(norm_bytes("L1.attn_norm.rmsnorm"), activations_rw * (farskip ? 1.5 : 1)) << schedule;
    EXPECT_DOUBLE_EQ(norm_bytes("L1.mlp_norm.rmsnorm"), activations_rw * (farskip ? 2 : 1)) << schedule;
  }
}

TEST(Prefill, QuantizedAllReduceSendsOneByteAndPaysAQuantizeAndADequantizePass) {
  // 2048 tokens x hidden h on every rank: a bf16 all-reduce buffer of 2048·h·2 bytes; quantized, 2048·h
  // bytes, with a quantize pass before it (reads 2 bytes, writes 1 per element) and a dequantize pass after
  // it (the reverse) on the comm stream; the consumer of the all-reduce waits for the dequantize pass.
  Scenario s = tp_prefill("qwen3-30b-a3b", "h200", 4, 2048, 2048, 2);
  s.schedule = "farskip";
  const double elements = 2048.0 * static_cast<double>(s.model.hidden);
  auto bf16 = simulate(s);
  s.options["allreduce"] = "quantized";
  auto quantized = simulate(s);
  auto bytes_of = [](const SimulationResult& r, const std::string& name) {
    for (const auto& c : r.program->collectives()) {
      if (c.name == name) return c.bytes;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(bytes_of(bf16, "L0.moe_allreduce"), 2 * elements);
  EXPECT_DOUBLE_EQ(bytes_of(quantized, "L0.moe_allreduce"), elements);
  const auto& ops = quantized.program->ops();
  auto find = [&](const std::string& name) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].rank == 0 && ops[i].name == name) return i;
    }
    ADD_FAILURE() << "no op " << name;
    return std::size_t{0};
  };
  const std::size_t quantize = find("L0.moe_allreduce.quantize"),
                    dequantize = find("L0.moe_allreduce.dequantize");
  EXPECT_DOUBLE_EQ(ops[quantize].work.hbm_bytes, 3 * elements);
  EXPECT_DOUBLE_EQ(ops[dequantize].work.hbm_bytes, 3 * elements);
  EXPECT_EQ(ops[quantize].stream, ops[dequantize].stream);
  EXPECT_LT(quantized.run.ops[quantize].end, quantized.run.ops[dequantize].start);
  // Half the bytes: the all-reduces take less time than in bf16.
  EXPECT_LT(comm_ms(quantized, "L0.moe_allreduce"), comm_ms(bf16, "L0.moe_allreduce"));
  s.options["allreduce"] = "int4";
  EXPECT_THROW(simulate(s), ConfigError);
  Scenario training_run = training("farskip");
  training_run.options["allreduce"] = "quantized";  // all-to-all MoE has no all-reduces to quantize
  EXPECT_THROW(simulate(training_run), ConfigError);
}

TEST(Validation, ImpossibleConfigsAreScheduleErrors) {
  Scenario s = training("regular");
  s.parallel.ep = 3;  // 64 experts
  EXPECT_THROW(simulate(s), ScheduleError);
  s = training("regular");
  s.workload.tokens = 5000;  // not a multiple of seq 4096
  EXPECT_THROW(simulate(s), ScheduleError);
  s = training("regular");
  s.parallel.ep = 16;
  s.parallel.nodes = 1;  // 8 GPUs per node
  EXPECT_THROW(simulate(s), ScheduleError);
  s = training("nope");
  EXPECT_THROW(simulate(s), ConfigError);
  s = training("farskip");
  s.options["parts"] = "both";
  EXPECT_THROW(simulate(s), ConfigError);
}

namespace {
/** Mixtral forward at EP 4, 16384 tokens per rank, on the calibrated H200 (which has a power section). */
Scenario mixtral_on_h200(const std::string& schedule) {
  Scenario s;
  s.model = models::load_model("mixtral-8x7b");
  s.hw = hw::load_profile("h200");
  s.schedule = schedule;
  s.parallel.ep = 4;
  s.workload.phase = Phase::FORWARD;
  s.workload.tokens = 16384;
  s.workload.seq_len = 4096;
  s.workload.layers = 2;
  return s;
}
}  // namespace

TEST(PowerCap, GemmHeavyLayersRunAtTheLimitAndSlowerThanUncapped) {
  // On real H200s this workload runs at 1550-1660 MHz of 1980 (data/layer-runs, nvml_mean): the draw it
  // would have at the maximum clock exceeds the 700 W limit, so the governor must bind.
  Scenario capped = mixtral_on_h200("regular");
  ASSERT_TRUE(capped.hw.power.present);
  const SimulationResult at_limit = simulate(capped);
  ASSERT_TRUE(at_limit.power.modeled);
  EXPECT_TRUE(at_limit.power.converged);
  EXPECT_LT(at_limit.power.speed[0], 1.0);
  EXPECT_GT(at_limit.power.uncapped_power_w[0], capped.hw.power.limit_w);
  EXPECT_NEAR(at_limit.power.mean_power_w[0], capped.hw.power.limit_w, 0.01 * capped.hw.power.limit_w);

  Scenario uncapped = capped;
  uncapped.power_cap = false;
  const SimulationResult free_clock = simulate(uncapped);
  EXPECT_FALSE(free_clock.power.modeled);
  EXPECT_GT(at_limit.step_ms, free_clock.step_ms * 1.02);
}

TEST(PowerCap, OverlapThatRemovesIdleGapsPaysInClock) {
  // FarSkip hides the all-to-alls the regular schedule waits on; without those idle gaps the mean power
  // rises, so its capped speed is lower. Contention off: lost SMs also lower the draw, which would blur it.
  Scenario regular_scenario = mixtral_on_h200("regular");
  Scenario farskip_scenario = mixtral_on_h200("farskip");
  without_contention(regular_scenario);
  without_contention(farskip_scenario);
  const SimulationResult regular = simulate(regular_scenario);
  const SimulationResult farskip = simulate(farskip_scenario);
  ASSERT_TRUE(regular.power.modeled && farskip.power.modeled);
  EXPECT_GT(regular.exposed_comm_ms, farskip.exposed_comm_ms + 1.0);
  EXPECT_LT(farskip.power.speed[0], regular.power.speed[0] - 0.002);
}

TEST(PowerCap, ProfilesWithoutAPowerSectionAreNotCapped) {
  Scenario s = training("regular");
  ASSERT_FALSE(s.hw.power.present);
  const SimulationResult r = simulate(s);
  EXPECT_FALSE(r.power.modeled);
  EXPECT_NE(r.power.not_modeled_because.find("no power section"), std::string::npos);
}

// Every op says which layer and which pass it belongs to, so nothing reads that from its name. The
// expectation is independent of the origin fields: a training program of L layers runs L forward layers
// and L backward layers, and each layer's backward holds what the forward launched (dgrad per kernel).
TEST(Schedules, EveryOpOfATrainingStepCarriesItsLayerAndPass) {
  const int layers = 3;
  for (const char* schedule : {"regular", "farskip"}) {
    SimulationResult r = simulate(training(schedule, Phase::TRAIN, layers));
    std::vector<int> forward(layers, 0), backward(layers, 0);
    for (const auto& op : r.program->ops()) {
      ASSERT_GE(op.origin.layer, 0) << op.name;
      ASSERT_LT(op.origin.layer, layers) << op.name;
      EXPECT_FALSE(op.origin.block.empty()) << op.name;
      if (op.rank != 0 || op.kind != sim::OpKind::KERNEL) continue;
      ++(op.origin.backward ? backward : forward)[static_cast<std::size_t>(op.origin.layer)];
    }
    for (int l = 0; l < layers; ++l) {
      EXPECT_GT(forward[static_cast<std::size_t>(l)], 0) << schedule << " layer " << l;
      EXPECT_GE(backward[static_cast<std::size_t>(l)], forward[static_cast<std::size_t>(l)])
          << schedule << " layer " << l;
    }
  }
}

// Host-bound eager ranks that meet at every collective wait for the slowest: an implementation profile's
// rank_spread charges each host cost 1 + spread x E[max of EP normals] (EP 2: 1/sqrt(pi)), nothing at EP 1.
TEST(Straggle, RankSpreadSlowsHostBoundRanksThatMeet) {
  const auto step = [](int ep, double spread) {
    Scenario s = training("regular", Phase::FORWARD, 2, 64);
    s.parallel.ep = ep;
    s.workload.tokens = 64 * ep;  // a few tokens per rank: the host sets the pace
    auto profile = std::make_shared<cost::ImplementationProfile>(cost::load_implementation("grouped"));
    profile->rank_spread = spread;
    s.impl = profile;
    return simulate(s).step_ms;
  };
  EXPECT_DOUBLE_EQ(step(1, 0.2), step(1, 0));
  const double ratio = step(2, 0.2) / step(2, 0);
  EXPECT_GT(ratio, 1.05);
  EXPECT_LE(ratio, cost::straggle_factor(0.2, 2) + 1e-9);  // 1.113: the GPU's part does not grow
}

// A forward that records autograd and runs no backward frees its graph when its output goes: host time per
// forward launch (the profile's graph_free_us_per_launch) after the last forward op. A training step frees it
// during its backward, prefill records no graph, and the fused runner none at all.
TEST(GraphFree, AForwardAloneEndsByFreeingItsGraph) {
  const auto run = [](Phase phase, const std::string& impl, double per_launch_us) {
    Scenario s = training("regular", phase, 2, 64);
    s.parallel.ep = 1;
    s.workload.tokens = 64;  // a few tokens: the host sets the pace
    auto profile = std::make_shared<cost::ImplementationProfile>(cost::load_implementation(impl));
    if (per_launch_us >= 0) profile->graph_free_us_per_launch = per_launch_us;
    s.impl = profile;
    return simulate(s);
  };
  struct Free {
    sim::OpKind kind;
    int layer;
    double host_ns;
  };
  const auto frees = [](const SimulationResult& r) {
    std::vector<Free> out;
    for (const auto& op : r.program->ops())
      if (op.rank == 0 && op.name.ends_with("autograd_graph_free"))
        out.push_back({op.kind, op.origin.layer, op.host_ns});
    return out;
  };
  const SimulationResult forward = run(Phase::FORWARD, "grouped", 50.0);
  int launches = 0;
  for (const auto& op : forward.program->ops())
    launches += op.rank == 0 && op.kind == sim::OpKind::KERNEL && !op.origin.backward;
  ASSERT_GT(launches, 20);
  const auto free = frees(forward);
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free.front().kind, sim::OpKind::HOST);
  EXPECT_EQ(free.front().layer, 1);
  EXPECT_NEAR(free.front().host_ns, 50e3 * launches, 1e-6);
  // The host's, after its last launch: the step ends that much later, less what the GPU still had to run.
  const double longer_ms = forward.step_ms - run(Phase::FORWARD, "grouped", 1e-9).step_ms;
  EXPECT_LE(longer_ms, 50e-3 * launches + 1e-9);
  EXPECT_GT(longer_ms, 0.9 * 50e-3 * launches);
  // the shipped profiles carry the measured cost (torch_graph_free: 0.4-1.7 us per node on a GPU host)
  const auto shipped = frees(run(Phase::FORWARD, "hf-eager", -1));
  ASSERT_EQ(shipped.size(), 1u);
  EXPECT_GT(shipped.front().host_ns, 0);
  EXPECT_TRUE(frees(run(Phase::TRAIN, "grouped", 2.0)).empty());
  EXPECT_TRUE(frees(run(Phase::PREFILL, "grouped", 2.0)).empty());
  EXPECT_TRUE(frees(simulate(training("regular", Phase::FORWARD, 2, 64))).empty());
}

// A model's own ops around its layers run once per step, and only where the implementation profile says the
// stack runs them: transformers' models prepare positions, mask and rotary tables before the first layer and
// normalize after the last; the in-tree runner and layer-only profiles run neither.
TEST(ModelOps, RunOnceAroundTheStackWhereTheProfileListsThem) {
  const auto blocks = [](const std::string& impl, Phase phase) {
    Scenario s = training("regular", phase, 3, 4096);
    s.impl = std::make_shared<cost::ImplementationProfile>(cost::load_implementation(impl));
    const SimulationResult r = simulate(s);
    std::map<std::string, int> kernels;  // "block[.bwd]@layer" -> rank 0's kernels
    for (const auto& op : r.program->ops()) {
      if (op.rank != 0 || op.kind != sim::OpKind::KERNEL) continue;
      if (op.origin.block != "model_inputs" && op.origin.block != "final_norm") continue;
      ++kernels[op.origin.block + (op.origin.backward ? ".bwd" : "") + "@" + std::to_string(op.origin.layer)];
    }
    return kernels;
  };
  const auto launches = [](const std::string& impl, models::LayerOp op, cost::ImplPass pass) {
    const cost::ImplementationProfile profile = cost::load_implementation(impl);
    int n = 0;
    for (const auto& step : profile.find(op, pass, models::AttentionType::MLA)->steps)
      n += step.kind != cost::ImplStepKind::SYNC;
    return n;
  };
  const int inputs = launches("hf-eager", models::LayerOp::MODEL_INPUTS, cost::ImplPass::FORWARD);
  const int norm = launches("hf-eager", models::LayerOp::FINAL_NORM, cost::ImplPass::FORWARD);
  const int norm_backward = launches("hf-eager", models::LayerOp::FINAL_NORM, cost::ImplPass::BACKWARD);
  ASSERT_GT(inputs, 0);
  ASSERT_GT(norm_backward, 0);
  EXPECT_EQ(blocks("hf-eager", Phase::FORWARD),
            (std::map<std::string, int>{{"final_norm@2", norm}, {"model_inputs@0", inputs}}));
  EXPECT_EQ(blocks("hf-eager", Phase::TRAIN),
            (std::map<std::string, int>{
                {"final_norm.bwd@2", norm_backward}, {"final_norm@2", norm}, {"model_inputs@0", inputs}}));
  EXPECT_TRUE(blocks("eager", Phase::TRAIN).empty());
  EXPECT_TRUE(blocks("fused", Phase::TRAIN).empty());
}

// GPT-OSS alternates sliding-window (128) and full attention, layer 0 sliding. At one sequence of 8,192 a
// sliding layer scores 128^2 / 2 + 8,064 x 128 = 1,040,384 pairs a head against the full layer's 8,192^2 / 2
// = 33,554,432: 32x less work, at the lower rate of rows of 128 keys; the rest of the layers is the same.
TEST(Windows, SlidingLayersAttendOverTheirWindowOnly) {
  Scenario s;
  s.model = models::load_model("gpt-oss-20b");
  s.hw = hw::load_profile("h200");
  s.schedule = "regular";
  s.parallel.ep = 8;
  s.workload.phase = Phase::TRAIN;
  s.workload.tokens = 8192;
  s.workload.seq_len = 8192;
  s.workload.layers = 4;
  const auto r = simulate(s);
  for (const char* kernel : {".attn_core.flash_fwd", ".attn_core.flash_bwd.dgrad"}) {
    SCOPED_TRACE(kernel);
    const double sliding = op_ms(r, "L0" + std::string(kernel)), full = op_ms(r, "L1" + std::string(kernel));
    EXPECT_LT(sliding, full / 4);
    EXPECT_GT(sliding, full / 32);  // slower per pair than the full layer, never faster
    EXPECT_DOUBLE_EQ(op_ms(r, "L2" + std::string(kernel)), sliding);
    EXPECT_DOUBLE_EQ(op_ms(r, "L3" + std::string(kernel)), full);
  }
  EXPECT_DOUBLE_EQ(op_ms(r, "L0.attn_qkv.qkv_proj"), op_ms(r, "L1.attn_qkv.qkv_proj"));
}
