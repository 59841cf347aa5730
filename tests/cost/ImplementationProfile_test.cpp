// Implementation profiles: strict loading, and the pieces an entry's steps become.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "moesim/common/Error.hpp"
#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/cost/ImplementationQuantities.hpp"
#include "moesim/cost/OpKernels.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/ModelSpec.hpp"

namespace moesim::cost {
namespace {

using models::LayerOp;
using models::Pass;

nlohmann::json minimal(nlohmann::json ops) {
  return {{"schema_version", 1},
          {"kind", "moesim-implementation-profile"},
          {"name", "test"},
          {"provenance", {{"source", "learned"}, {"description", "unit test"}}},
          {"host", {{"cpu_model", "test cpu"}}},
          {"ops", std::move(ops)}};
}

// routed_experts forward: a sync, then per expert a gather of its rows and its fc1, then (EP > 1 only) a
// fixed kernel.
nlohmann::json expert_loop_profile() {
  return minimal(nlohmann::json::array(
      {{{"op", "routed_experts"},
        {"pass", "forward"},
        {"steps",
         {{{"kind", "sync"}, {"host_us", 7}},
          {{"kind", "memory"},
           {"repeat", "per_expert"},
           {"rows", "expert_rows"},
           {"width", "hidden"},
           {"bytes_per_element", 4},
           {"host_us", 20}},
          {{"kind", "gemm"}, {"repeat", "per_expert"}, {"gemm", "fc1"}, {"efficiency", 0.5}, {"host_us", 30}},
          {{"kind", "fixed"}, {"when", "ep>1"}, {"time_us", 9}, {"host_us", 40}}}}},
       {{"op", "attn_norm"}, {"pass", "backward"}, {"steps", nlohmann::json::array()}}}));
}

std::string error_of(const nlohmann::json& document) {
  try {
    implementation_from_json(document, "p.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The elements of one stacked expert weight on this rank: Qwen3-30B-A3B's [128 / EP, 768, 2048].
TEST(ImplementationProfile, ExpertWeightsWidthIsTheLocalStackedWeight) {
  const models::ModelSpec qwen3 = models::load_model("qwen3-30b-a3b");
  models::OpContext c;
  c.tokens = 2048;
  c.experts_total_local = 32;  // EP 4
  EXPECT_DOUBLE_EQ(implementation_width(qwen3, c, ImplWidth::EXPERT_WEIGHTS), 32.0 * 768 * 2048);
  c.expert_tokens = std::vector<std::int64_t>(16, 1);  // the experts an uneven routing left on this rank
  EXPECT_DOUBLE_EQ(implementation_width(qwen3, c, ImplWidth::EXPERT_WEIGHTS), 16.0 * 768 * 2048);
  EXPECT_EQ(to_string(ImplWidth::EXPERT_WEIGHTS), "expert_weights");
}

// What RoPE rotates, per token: DeepSeek-V2-Lite's rotary parts (16 query heads x 64, one shared 64-wide
// key), as its HF config's qk_rope_head_dim says; with GQA the whole heads (Qwen3: 32 x 128 and 4 x 128).
TEST(ImplementationProfile, RopeWidthsAreTheRotaryPartsOfQueriesAndKeys) {
  models::OpContext c;
  c.tokens = 4096;
  const models::ModelSpec deepseek = models::load_model("deepseek-v2-lite");
  EXPECT_DOUBLE_EQ(implementation_width(deepseek, c, ImplWidth::Q_ROPE), 16.0 * 64);
  EXPECT_DOUBLE_EQ(implementation_width(deepseek, c, ImplWidth::K_ROPE), 64.0);
  c.tp = 2;  // the heads split over TP ranks, the shared key does not
  EXPECT_DOUBLE_EQ(implementation_width(deepseek, c, ImplWidth::Q_ROPE), 8.0 * 64);
  EXPECT_DOUBLE_EQ(implementation_width(deepseek, c, ImplWidth::K_ROPE), 64.0);
  c.tp = 1;
  const models::ModelSpec qwen3 = models::load_model("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(implementation_width(qwen3, c, ImplWidth::Q_ROPE), 32.0 * 128);
  EXPECT_DOUBLE_EQ(implementation_width(qwen3, c, ImplWidth::K_ROPE), 4.0 * 128);
  EXPECT_EQ(to_string(ImplWidth::Q_ROPE), "q_rope");
}

TEST(ImplementationProfile, ShippedProfilesLoadAndFusedIsEmpty) {
  EXPECT_TRUE(load_implementation("fused").is_fused());
  for (const char* name : {"eager", "grouped", "hf-eager", "hf-grouped_mm"}) {
    const ImplementationProfile p = load_implementation(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.is_fused());
    EXPECT_EQ(p.provenance.source, "built-in");
    // Every MoE-layer op has a forward and a backward entry; attention projections one per attention type.
    for (LayerOp op : {LayerOp::ATTN_NORM, LayerOp::GATE, LayerOp::PERMUTE, LayerOp::ROUTED_EXPERTS,
                       LayerOp::UNPERMUTE, LayerOp::SHARED_EXPERTS}) {
      EXPECT_NE(p.find(op, ImplPass::FORWARD, models::AttentionType::GQA), nullptr) << models::to_string(op);
      EXPECT_NE(p.find(op, ImplPass::BACKWARD, models::AttentionType::GQA), nullptr) << models::to_string(op);
    }
    EXPECT_NE(p.find(LayerOp::ATTN_QKV, ImplPass::FORWARD, models::AttentionType::MLA)->attention,
              std::nullopt);
  }
  const auto names = shipped_implementation_names();
  EXPECT_EQ(names, (std::vector<std::string>{"eager", "fused", "grouped", "hf-eager", "hf-grouped_mm"}));
}

// Closed forms of the expected maximum of n standard normals: 0, 1/sqrt(pi), 3/(2 sqrt(pi)), and for 4
// (3/sqrt(pi)) (1/2 + arcsin(1/3)/pi) = 1.0293754.
TEST(ImplementationProfile, StraggleFactorIsOnePlusSpreadTimesTheExpectedMaximum) {
  const double root_pi = std::sqrt(std::numbers::pi);
  EXPECT_EQ(expected_max_of_normals(1), 0);
  EXPECT_NEAR(expected_max_of_normals(2), 1 / root_pi, 1e-6);
  EXPECT_NEAR(expected_max_of_normals(3), 3 / (2 * root_pi), 1e-6);
  EXPECT_NEAR(expected_max_of_normals(4), 3 / root_pi * (0.5 + std::asin(1.0 / 3) / std::numbers::pi), 1e-6);
  EXPECT_NEAR(straggle_factor(0.1, 2), 1 + 0.1 / root_pi, 1e-6);
  EXPECT_EQ(straggle_factor(0.3, 1), 1);
  EXPECT_EQ(straggle_factor(0, 64), 1);
  auto document = expert_loop_profile();
  document["host"]["rank_spread"] = 0.25;
  EXPECT_EQ(implementation_to_json(implementation_from_json(document, "p.json"))["host"]["rank_spread"],
            0.25);
  document["host"]["rank_spread"] = -0.1;
  EXPECT_NE(error_of(document).find("/host/rank_spread"), std::string::npos);
}

// A learned profile's host probe (us per eager op of the traced process) round-trips; none or > 0 only.
TEST(ImplementationProfile, HostProbeIsPositiveWhereGiven) {
  auto document = expert_loop_profile();
  EXPECT_EQ(implementation_from_json(document, "p.json").host_probe_us, 0);
  document["host"]["probe_us"] = 9.77;
  EXPECT_EQ(implementation_to_json(implementation_from_json(document, "p.json"))["host"]["probe_us"], 9.77);
  document["host"]["probe_us"] = 0;
  EXPECT_NE(error_of(document).find("/host/probe_us"), std::string::npos);
}

// The graph's free per forward launch round-trips, >= 0; a learned profile without one takes its base's.
TEST(ImplementationProfile, GraphFreeComesFromTheProfileElseItsBase) {
  auto document = expert_loop_profile();
  EXPECT_EQ(implementation_from_json(document, "p.json").graph_free_us(), 0);
  document["host"]["graph_free_us_per_launch"] = 1.25;
  EXPECT_EQ(implementation_to_json(
                implementation_from_json(document, "p.json"))["host"]["graph_free_us_per_launch"],
            1.25);
  document["host"]["graph_free_us_per_launch"] = -1;
  EXPECT_NE(error_of(document).find("/host/graph_free_us_per_launch"), std::string::npos);
  document["host"].erase("graph_free_us_per_launch");
  document["base"] = "eager";
  const ImplementationProfile learned = implementation_from_json(document, "p.json");
  EXPECT_GT(learned.graph_free_us(), 0);
  EXPECT_EQ(learned.graph_free_us(), load_implementation("eager").graph_free_us_per_launch);
}

TEST(ImplementationProfile, RoundTripsThroughJson) {
  const ImplementationProfile p = implementation_from_json(expert_loop_profile(), "p.json");
  const ImplementationProfile back = implementation_from_json(implementation_to_json(p), "back.json");
  ASSERT_EQ(back.ops.size(), 2u);
  const auto& steps = back.ops[0].steps;
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[1].repeat, ImplRepeat::PER_EXPERT);
  EXPECT_EQ(steps[1].rows, ImplRows::EXPERT_ROWS);
  EXPECT_DOUBLE_EQ(steps[1].host_ns, 20e3);
  EXPECT_EQ(steps[2].gemm, "fc1");
  EXPECT_DOUBLE_EQ(steps[2].efficiency, 0.5);
  EXPECT_EQ(steps[3].when, ImplCondition::MULTI_RANK);
  EXPECT_DOUBLE_EQ(steps[3].time_ns, 9e3);
}

TEST(ImplementationProfile, BadInputNamesFileAndPointer) {
  auto profile = expert_loop_profile();
  profile["ops"][0]["steps"][1]["bytes_per_elment"] = 4;
  EXPECT_NE(error_of(profile).find("p.json: /ops/0/steps/1/bytes_per_elment"), std::string::npos)
      << error_of(profile);

  profile = expert_loop_profile();
  profile["ops"][0]["steps"][1]["width"] = "columns";
  EXPECT_NE(error_of(profile).find("/ops/0/steps/1/width"), std::string::npos);

  profile = expert_loop_profile();
  profile["ops"][0]["steps"][1]["repeat"] = "once";  // expert_rows outside a per-expert loop
  EXPECT_NE(error_of(profile).find("/ops/0/steps/1/rows"), std::string::npos);

  profile = expert_loop_profile();
  profile["ops"][1]["op"] = "gate";
  profile["ops"][1]["steps"] = {{{"kind", "sync"}, {"repeat", "per_expert"}, {"host_us", 1}}};
  EXPECT_NE(error_of(profile).find("/ops/1/steps/0/repeat"), std::string::npos);

  profile = expert_loop_profile();
  profile["ops"][0]["steps"][2]["efficiency"] = 0;
  EXPECT_NE(error_of(profile).find("/ops/0/steps/2/efficiency"), std::string::npos);

  profile = expert_loop_profile();
  profile["ops"].push_back(profile["ops"][1]);
  EXPECT_NE(error_of(profile).find("/ops/2 repeats the entry at /ops/1"), std::string::npos);

  profile = expert_loop_profile();
  profile["ops"][0]["op"] = "router";
  EXPECT_NE(error_of(profile).find("/ops/0/op"), std::string::npos);

  profile = expert_loop_profile();
  profile["base"] = "test";
  EXPECT_NE(error_of(profile).find("/base"), std::string::npos);

  EXPECT_THROW(load_implementation("no-such-implementation"), ConfigError);
}

TEST(ImplementationProfile, GroupedGemmModelReadsWritesAndRejectsWithThePointer) {
  nlohmann::json step = {{"kind", "gemm"},
                         {"gemm", "fc1"},
                         {"efficiency", 1},
                         {"host_us", 1},
                         {"grouped",
                          {{"row_tiles", {{{"max_mean_rows", 128}, {"rows", 128}}, {{"rows", 256}}}},
                           {"stream_GB_per_s", 2900},
                           {"store_GB_per_s", 3600}}}};
  auto document = [](const nlohmann::json& s) {
    return minimal({{{"op", "routed_experts"}, {"pass", "forward"}, {"steps", {s}}}});
  };
  const ImplementationProfile p = implementation_from_json(document(step), "p.json");
  const ImplementationProfile back = implementation_from_json(implementation_to_json(p), "back.json");
  const auto& g = back.ops[0].steps[0].grouped;
  ASSERT_TRUE(g.has_value());
  ASSERT_EQ(g->row_tiles.size(), 2u);
  EXPECT_EQ(g->row_tiles[0].max_mean_rows, 128);
  EXPECT_EQ(g->row_tiles[1].rows, 256);
  EXPECT_DOUBLE_EQ(g->stream_bytes_per_s, 2900e9);
  EXPECT_DOUBLE_EQ(g->store_bytes_per_s, 3600e9);

  auto error = [&](const nlohmann::json& s) { return error_of(document(s)); };
  nlohmann::json bad = step;
  bad["grouped"]["row_tiles"][1]["max_mean_rows"] = 512;
  EXPECT_NE(error(bad).find("p.json: /ops/0/steps/0/grouped/row_tiles/1/max_mean_rows"), std::string::npos)
      << error(bad);
  bad = step;
  bad["grouped"]["row_tiles"][0].erase("max_mean_rows");
  EXPECT_NE(error(bad).find("/grouped/row_tiles/0/max_mean_rows"), std::string::npos) << error(bad);
  bad = step;
  bad["grouped"]["row_tiles"] = nlohmann::json::array();
  EXPECT_NE(error(bad).find("/grouped/row_tiles"), std::string::npos) << error(bad);
  bad = step;
  bad["grouped"]["stream_GB_per_s"] = 0;
  EXPECT_NE(error(bad).find("/grouped/stream_GB_per_s"), std::string::npos) << error(bad);
  bad = step;
  bad["grouped"]["tile"] = 1;
  EXPECT_NE(error(bad).find("/grouped/tile"), std::string::npos) << error(bad);
}

class ImplementationKernelsTest : public ::testing::Test {
 protected:
  hw::HwProfile hw = hw::load_profile("h100");
  models::ModelSpec model = models::load_model("qwen3-30b-a3b");
  ImplementationProfile profile = implementation_from_json(expert_loop_profile(), "p.json");

  models::OpContext experts(std::vector<std::int64_t> rows) const {
    models::OpContext c;
    c.tokens = 2048;
    c.seq_len = 2048;
    c.expert_tokens = std::move(rows);
    c.experts_total_local = static_cast<int>(c.expert_tokens.size());
    return c;
  }

  // What a user's file holding `document` gives: the profile written out and read back.
  static ImplementationProfile written_and_read(const nlohmann::json& document) {
    return implementation_from_json(implementation_to_json(implementation_from_json(document, "p.json")),
                                    "back.json");
  }

  // The routed experts' forward pieces for one expert of `rows` rows with `p` on `gpu`: sync, gather, fc1.
  std::vector<KernelPiece> one_expert(const hw::HwProfile& gpu, const ImplementationProfile& p,
                                      std::int64_t rows) const {
    return op_kernels({gpu, model, hw::AttentionImpl::FUSED, &p, 1}, LayerOp::ROUTED_EXPERTS, Pass::FORWARD,
                      experts({rows}));
  }
};

TEST_F(ImplementationKernelsTest, PerExpertStepsRepeatForExpertsWithRows) {
  const OpCostInputs in{hw, model, hw::AttentionImpl::FUSED, &profile, 1};
  const auto pieces = op_kernels(in, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, experts({10, 0, 5, 7}));
  // One sync, then (gather, fc1) for each of the 3 experts with rows; no fixed step at EP 1.
  ASSERT_EQ(pieces.size(), 7u);
  EXPECT_EQ(pieces[0].kind, PieceKind::HOST_SYNC);
  EXPECT_DOUBLE_EQ(pieces[0].launch_ns, 7e3);
  // The gather of expert 2 moves 4 bytes per element of its 5 rows of the hidden width (2048).
  EXPECT_EQ(pieces[3].kind, PieceKind::KERNEL);
  EXPECT_DOUBLE_EQ(pieces[3].work.hbm_bytes, 4.0 * 5 * 2048);
  EXPECT_DOUBLE_EQ(pieces[3].launch_ns, 20e3);
  // fc1 of SwiGLU for expert 3: 7 rows x (2 * 768) x 2048, at half the profile's rate.
  EXPECT_DOUBLE_EQ(pieces[6].flops, 2.0 * 7 * (2 * 768) * 2048);
  const OpCostInputs fused{hw, model, hw::AttentionImpl::FUSED, nullptr, 1};
  models::OpContext one = experts({7});
  one.expert_loop = true;
  const auto reference = op_kernels(fused, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, one);
  ASSERT_EQ(reference.front().name, "routed_experts.fc1");
  EXPECT_DOUBLE_EQ(pieces[6].work.compute_ns, 2 * reference.front().work.compute_ns);
  EXPECT_DOUBLE_EQ(pieces[6].launch_ns, 30e3);

  const OpCostInputs two_ranks{hw, model, hw::AttentionImpl::FUSED, &profile, 2};
  const auto with_exchange =
      op_kernels(two_ranks, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, experts({10, 0, 5, 7}));
  ASSERT_EQ(with_exchange.size(), 8u);
  // A fixed kernel takes its time, as a fixed cost nothing speeds up.
  EXPECT_DOUBLE_EQ(with_exchange.back().work.fixed_ns, 9e3);
}

// A learned per-launch excess adds to every kernel of its GEMM step and to nothing else: fc1 of each expert
// takes the table's work plus 1.5 us that no resource speeds up.
TEST_F(ImplementationKernelsTest, GemmKernelOverheadAddsToEachLaunch) {
  auto document = expert_loop_profile();
  document["ops"][0]["steps"][2]["efficiency"] = 1;
  const ImplementationProfile plain = implementation_from_json(document, "p.json");
  document["ops"][0]["steps"][2]["kernel_overhead_us"] = 1.5;
  const ImplementationProfile with_overhead = implementation_from_json(
      implementation_to_json(implementation_from_json(document, "p.json")), "back.json");
  const auto c = experts({10, 0, 5, 7});
  const auto a =
      op_kernels({hw, model, hw::AttentionImpl::FUSED, &plain, 1}, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, c);
  const auto b = op_kernels({hw, model, hw::AttentionImpl::FUSED, &with_overhead, 1}, LayerOp::ROUTED_EXPERTS,
                            Pass::FORWARD, c);
  ASSERT_EQ(a.size(), b.size());
  int gemms = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool fc1 = a[i].name == "routed_experts.fc1";
    gemms += fc1 ? 1 : 0;
    EXPECT_DOUBLE_EQ(b[i].work.fixed_ns, a[i].work.fixed_ns + (fc1 ? 1.5e3 : 0)) << a[i].name;
    EXPECT_DOUBLE_EQ(b[i].work.compute_ns, a[i].work.compute_ns) << a[i].name;
  }
  EXPECT_EQ(gemms, 3);  // the three experts with rows
  document["ops"][0]["steps"][2]["kernel_overhead_us"] = -2e6;
  EXPECT_NE(error_of(document).find("/ops/0/steps/2/kernel_overhead_us"), std::string::npos);
}

// A negative per-launch overhead (GEMMs that ran faster than the table at the traced shape) comes off the
// table's time of each of its kernels, not off the empty kernel's time: 0.5 us off every fc1, and an fc1
// whose table time is shorter than the deficit keeps only kernel_min.
TEST_F(ImplementationKernelsTest, NegativeGemmOverheadShortensTheTableTimeDownToAnEmptyKernel) {
  auto document = expert_loop_profile();
  document["ops"][0]["steps"][2]["efficiency"] = 1;
  const ImplementationProfile plain = implementation_from_json(document, "p.json");
  const auto c = experts({10, 0, 5, 7});
  const auto a =
      op_kernels({hw, model, hw::AttentionImpl::FUSED, &plain, 1}, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, c);
  double largest_body = 0;
  for (const auto& k : a)
    if (k.name == "routed_experts.fc1")
      largest_body = std::max({largest_body, k.work.compute_ns, k.work.memory_ns});
  ASSERT_GT(largest_body, 0);
  for (const double deficit_ns : {500.0, 2 * largest_body}) {
    document["ops"][0]["steps"][2]["kernel_overhead_us"] = -deficit_ns * 1e-3;
    const ImplementationProfile faster = implementation_from_json(
        implementation_to_json(implementation_from_json(document, "p.json")), "back.json");
    const auto b = op_kernels({hw, model, hw::AttentionImpl::FUSED, &faster, 1}, LayerOp::ROUTED_EXPERTS,
                              Pass::FORWARD, c);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool fc1 = a[i].name == "routed_experts.fc1";
      EXPECT_DOUBLE_EQ(b[i].work.fixed_ns, a[i].work.fixed_ns) << a[i].name;
      EXPECT_DOUBLE_EQ(b[i].work.compute_ns,
                       fc1 ? std::max(0.0, a[i].work.compute_ns - deficit_ns) : a[i].work.compute_ns)
          << a[i].name;
      EXPECT_DOUBLE_EQ(b[i].work.memory_ns,
                       fc1 ? std::max(0.0, a[i].work.memory_ns - deficit_ns) : a[i].work.memory_ns)
          << a[i].name;
    }
  }
}

// A capped memory step runs no faster than its rate on any GPU, as SM time; its HBM time stays the curve's:
// 4 bytes x 5 rows x 2048 (hidden) at 1,000 GB/s is 40.96 ns, on H100 and H200 alike.
TEST_F(ImplementationKernelsTest, MemoryRateCapIsSmTimeOnEveryGpu) {
  auto document = expert_loop_profile();
  document["ops"][0]["steps"][1]["max_GB_per_s"] = 1000;
  const ImplementationProfile capped = written_and_read(document);
  for (const char* gpu : {"h100", "h200"}) {
    const hw::HwProfile hw_gpu = hw::load_profile(gpu);
    const auto a = one_expert(hw_gpu, profile, 5);
    const auto b = one_expert(hw_gpu, capped, 5);
    ASSERT_EQ(a.size(), 3u);  // sync, gather, fc1
    EXPECT_DOUBLE_EQ(b[1].work.compute_ns, 4.0 * 5 * 2048 / 1000e9 * 1e9) << gpu;
    EXPECT_DOUBLE_EQ(b[1].work.memory_ns, a[1].work.memory_ns) << gpu;
    EXPECT_DOUBLE_EQ(b[1].work.hbm_bytes, a[1].work.hbm_bytes) << gpu;
  }
  document["ops"][0]["steps"][1]["max_GB_per_s"] = 0;
  EXPECT_NE(error_of(document).find("/ops/0/steps/1/max_GB_per_s"), std::string::npos);
}

// A memory step's floor holds a small kernel at it and leaves a large one to its bytes: 4 bytes x 5 rows x
// 2048 (hidden) takes kernel_min plus a fraction of a microsecond alone, so a 3 us floor sets its time; at 2
// million rows (16 GB) the curve's time is far above the floor, which then changes nothing.
TEST_F(ImplementationKernelsTest, MemoryFloorHoldsSmallKernelsAndLeavesLargeOnesToTheirBytes) {
  auto document = expert_loop_profile();
  document["ops"][0]["steps"][1]["floor_us"] = 3;
  const ImplementationProfile floored = written_and_read(document);
  auto alone_ns = [](const sim::KernelWork& w) { return w.fixed_ns + std::max(w.compute_ns, w.memory_ns); };
  for (std::int64_t rows : {5, 2'000'000}) {
    const auto a = one_expert(hw, profile, rows);
    const auto b = one_expert(hw, floored, rows);
    ASSERT_EQ(a.size(), 3u);  // sync, gather, fc1
    EXPECT_EQ(alone_ns(a[1].work) < 3e3, rows == 5) << rows;
    EXPECT_DOUBLE_EQ(alone_ns(b[1].work), std::max(3e3, alone_ns(a[1].work))) << rows;
    EXPECT_DOUBLE_EQ(b[1].work.memory_ns, a[1].work.memory_ns) << rows;
    if (rows > 5) {
      EXPECT_DOUBLE_EQ(b[1].work.fixed_ns, a[1].work.fixed_ns);
    }
  }
  document["ops"][0]["steps"][1]["floor_us"] = 0;
  EXPECT_NE(error_of(document).find("/ops/0/steps/1/floor_us"), std::string::npos);
}

// A bf16 step of atomic adds runs no faster than the GPU's atomic-add rate, as SM time: one add per element
// of 2,048 rows x 2,048 (hidden) at 100 G/s is 41,943.04 ns, about 6x those bytes' HBM time. Without the
// rate in the hardware profile, or in fp32 (whose rate is not measured), the bytes alone time it.
TEST_F(ImplementationKernelsTest, AtomicAddsRunAtTheGpusRateForThem) {
  auto document = expert_loop_profile();
  document["ops"][0]["steps"][1]["atomic_adds_per_element"] = 1;
  const ImplementationProfile atomic = written_and_read(document);
  hw::HwProfile with_rate = hw, without_rate = hw;
  with_rate.gpu.atomic_add_bf16_per_s = 100e9;
  without_rate.gpu.atomic_add_bf16_per_s = 0;
  const auto plain = one_expert(with_rate, profile, 2048);
  const auto adds = one_expert(with_rate, atomic, 2048);
  ASSERT_EQ(adds.size(), 3u);  // sync, gather, fc1
  EXPECT_DOUBLE_EQ(adds[1].work.compute_ns, 2048.0 * 2048 / 100e9 * 1e9);
  EXPECT_GT(adds[1].work.compute_ns, 5 * plain[1].work.memory_ns);
  EXPECT_DOUBLE_EQ(adds[1].work.memory_ns, plain[1].work.memory_ns);
  EXPECT_DOUBLE_EQ(one_expert(without_rate, atomic, 2048)[1].work.compute_ns,
                   one_expert(without_rate, profile, 2048)[1].work.compute_ns);
  auto fp32 = experts({2048});
  fp32.dtype = models::DType::FP32;
  const auto fp32_adds = op_kernels({with_rate, model, hw::AttentionImpl::FUSED, &atomic, 1},
                                    LayerOp::ROUTED_EXPERTS, Pass::FORWARD, fp32);
  const auto fp32_plain = op_kernels({with_rate, model, hw::AttentionImpl::FUSED, &profile, 1},
                                     LayerOp::ROUTED_EXPERTS, Pass::FORWARD, fp32);
  EXPECT_DOUBLE_EQ(fp32_adds[1].work.compute_ns, fp32_plain[1].work.compute_ns);
  document["ops"][0]["steps"][1]["atomic_adds_per_element"] = 0;
  EXPECT_NE(error_of(document).find("/ops/0/steps/1/atomic_adds_per_element"), std::string::npos);
}

// A step with steady bytes keeps, above them, the rate the memory curve gives at them: 4 bytes x 2,048 rows
// x 2,048 (hidden) is 16.8 MB; at 8x the rows (134 MB) its memory time is exactly 8x, where the curve alone
// (h100: 0.70 of HBM at 16.8 MB, 0.81 at 90 MB) would make it shorter; below them nothing changes.
TEST_F(ImplementationKernelsTest, AStepKeepsTheRateOfItsSteadyBytesAboveThem) {
  auto document = expert_loop_profile();
  const double steady_bytes = 4.0 * 2048 * 2048;
  document["ops"][0]["steps"][1]["steady_from_MB"] = steady_bytes * 1e-6;
  const ImplementationProfile steady = written_and_read(document);
  const double at_steady = one_expert(hw, profile, 2048)[1].work.memory_ns;
  EXPECT_DOUBLE_EQ(one_expert(hw, steady, 2048)[1].work.memory_ns, at_steady);
  EXPECT_DOUBLE_EQ(one_expert(hw, steady, 512)[1].work.memory_ns,
                   one_expert(hw, profile, 512)[1].work.memory_ns);
  EXPECT_NEAR(one_expert(hw, steady, 8 * 2048)[1].work.memory_ns, 8 * at_steady, 1e-9 * at_steady);
  EXPECT_LT(one_expert(hw, profile, 8 * 2048)[1].work.memory_ns, 0.9 * 8 * at_steady);
  document["ops"][0]["steps"][1]["steady_from_MB"] = 0;
  EXPECT_NE(error_of(document).find("/ops/0/steps/1/steady_from_MB"), std::string::npos);
}

// Megatron's sort_chunks_by_idxs splits the received rows into one chunk per (source rank, local expert): its
// host time grows with EP x local experts, here 2 x 4 = 8 chunks at 2.5 us each beside the 11 us op.
TEST_F(ImplementationKernelsTest, HostTimePerChunkScalesWithTheExchangesChunks) {
  auto document = minimal(nlohmann::json::array({{{"op", "routed_experts"},
                                                  {"pass", "forward"},
                                                  {"steps",
                                                   {{{"kind", "memory"},
                                                     {"rows", "received_rows"},
                                                     {"width", "hidden"},
                                                     {"bytes_per_element", 4},
                                                     {"host_us", 11},
                                                     {"host_us_per_chunk", 2.5}}}}}}));
  const ImplementationProfile chunked = implementation_from_json(document, "p.json");
  EXPECT_DOUBLE_EQ(implementation_from_json(implementation_to_json(chunked), "back.json")
                       .ops[0]
                       .steps[0]
                       .host_ns_per_chunk,
                   2.5e3);
  const OpCostInputs two_ranks{hw, model, hw::AttentionImpl::FUSED, &chunked, 2};
  const auto pieces = op_kernels(two_ranks, LayerOp::ROUTED_EXPERTS, Pass::FORWARD, experts({4, 4, 4, 4}));
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_DOUBLE_EQ(pieces[0].launch_ns, 11e3 + 8 * 2.5e3);
  document["ops"][0]["steps"][0]["host_us_per_chunk"] = -1;
  EXPECT_NE(error_of(document).find("/ops/0/steps/0/host_us_per_chunk"), std::string::npos);
}

TEST_F(ImplementationKernelsTest, OpsWithoutEntryKeepTheFusedInventory) {
  const OpCostInputs in{hw, model, hw::AttentionImpl::FUSED, &profile, 1};
  const OpCostInputs fused{hw, model, hw::AttentionImpl::FUSED, nullptr, 1};
  const auto c = experts({16, 16});
  for (LayerOp op : {LayerOp::GATE, LayerOp::MLP_NORM}) {
    const auto a = op_kernels(in, op, Pass::FORWARD, c), b = op_kernels(fused, op, Pass::FORWARD, c);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].name, b[i].name);
      EXPECT_EQ(a[i].launch_ns, b[i].launch_ns);
      EXPECT_EQ(a[i].work.memory_ns, b[i].work.memory_ns);
    }
  }
  // attn_norm's backward entry has no steps: DGRAD launches nothing, and WGRAD nothing either.
  EXPECT_TRUE(op_kernels(in, LayerOp::ATTN_NORM, Pass::DGRAD, c).empty());
  EXPECT_TRUE(op_kernels(in, LayerOp::ATTN_NORM, Pass::WGRAD, c).empty());
  EXPECT_FALSE(op_kernels(fused, LayerOp::ATTN_NORM, Pass::DGRAD, c).empty());
}

TEST_F(ImplementationKernelsTest, ShippedProfilesLaunchNothingForOpsTheModelLacks) {
  const ImplementationProfile grouped = load_implementation("grouped");
  const OpCostInputs in{hw, model, hw::AttentionImpl::FUSED, &grouped, 4};
  ASSERT_EQ(model.moe.shared_experts, 0);
  EXPECT_TRUE(op_kernels(in, LayerOp::SHARED_EXPERTS, Pass::FORWARD, experts({8})).empty());
  // grouped's backward of the routed experts is emitted whole with DGRAD: two GEMMs per projection.
  const auto dgrad = op_kernels(in, LayerOp::ROUTED_EXPERTS, Pass::DGRAD, experts({8, 8}));
  int gemms = 0;
  for (const auto& p : dgrad) gemms += p.flops > 0 ? 1 : 0;
  EXPECT_EQ(gemms, 4);
  EXPECT_TRUE(op_kernels(in, LayerOp::ROUTED_EXPERTS, Pass::WGRAD, experts({8, 8})).empty());
}

// A `when: qk_norm` step runs only for a model whose attention normalizes queries and keys per head: an
// 8-byte step over the query width adds 8 x 2048 tokens x (32 heads x 128) bytes for Qwen3-30B-A3B, nothing
// without.
TEST_F(ImplementationKernelsTest, QkNormStepsRunOnlyForModelsWithQkNorm) {
  auto document = minimal(nlohmann::json::array({{{"op", "attn_qkv"},
                                                  {"pass", "forward"},
                                                  {"steps",
                                                   {{{"kind", "memory"},
                                                     {"rows", "tokens"},
                                                     {"width", "q_width"},
                                                     {"bytes_per_element", 8},
                                                     {"when", "qk_norm"},
                                                     {"host_us", 3}}}}}}));
  const ImplementationProfile normed = implementation_from_json(document, "p.json");
  EXPECT_EQ(implementation_from_json(implementation_to_json(normed), "back.json").ops[0].steps[0].when,
            ImplCondition::QK_NORM);
  ASSERT_TRUE(model.attention.qk_norm);  // models/specs/qwen3-30b-a3b.json
  const OpCostInputs in{hw, model, hw::AttentionImpl::FUSED, &normed, 1};
  const auto pieces = op_kernels(in, LayerOp::ATTN_QKV, Pass::FORWARD, experts({8}));
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_DOUBLE_EQ(pieces[0].work.hbm_bytes, 8.0 * 2048 * 32 * 128);
  models::ModelSpec plain = model;
  plain.attention.qk_norm = false;
  const OpCostInputs without{hw, plain, hw::AttentionImpl::FUSED, &normed, 1};
  EXPECT_TRUE(op_kernels(without, LayerOp::ATTN_QKV, Pass::FORWARD, experts({8})).empty());
  // The shipped profiles charge Qwen3's two per-head RMSNorms (8 kernels each) before RoPE.
  const ImplementationProfile grouped = load_implementation("grouped");
  const OpCostInputs shipped{hw, model, hw::AttentionImpl::FUSED, &grouped, 1};
  const OpCostInputs shipped_plain{hw, plain, hw::AttentionImpl::FUSED, &grouped, 1};
  EXPECT_EQ(op_kernels(shipped, LayerOp::ATTN_QKV, Pass::FORWARD, experts({8})).size(),
            op_kernels(shipped_plain, LayerOp::ATTN_QKV, Pass::FORWARD, experts({8})).size() + 16);
  document["ops"][0]["steps"][0]["when"] = "qk-norm";
  EXPECT_NE(error_of(document).find("/ops/0/steps/0/when"), std::string::npos);
}

// The shipped profiles' `when: shared_gate` steps (make_builtins.py's shared_gate): for a model whose shared
// experts are gated, the 1-wide projection (a GEMV reading the 2048 x 2048 bf16 input: 8 MiB), the sigmoid
// and the broadcast multiply forward; their backward adds the projection's dgrad, its add into the input's
// gradient and its wgrad, the sigmoid's backward and the multiply's two gradients and sum: 7 kernels.
TEST_F(ImplementationKernelsTest, SharedGateStepsRunOnlyForModelsWithASharedGate) {
  models::ModelSpec plain = models::load_model("deepseek-v2-lite");
  ASSERT_GT(plain.moe.shared_experts, 0);
  ASSERT_EQ(plain.hidden, 2048);
  models::ModelSpec gated = plain;
  gated.moe.shared_gate = true;
  for (const char* name : {"eager", "grouped", "hf-eager", "hf-grouped_mm"}) {
    const ImplementationProfile shipped = load_implementation(name);
    const OpCostInputs with{hw, gated, hw::AttentionImpl::FUSED, &shipped, 1};
    const OpCostInputs without{hw, plain, hw::AttentionImpl::FUSED, &shipped, 1};
    const auto forward = op_kernels(with, LayerOp::SHARED_EXPERTS, Pass::FORWARD, experts({8}));
    EXPECT_EQ(forward.size(),
              op_kernels(without, LayerOp::SHARED_EXPERTS, Pass::FORWARD, experts({8})).size() + 3)
        << name;
    const auto projection = std::find_if(forward.begin(), forward.end(),
                                         [](const auto& k) { return k.name.ends_with("gate_proj"); });
    ASSERT_NE(projection, forward.end()) << name;
    EXPECT_DOUBLE_EQ(projection->work.hbm_bytes, 2.0 * 2048 * 2048) << name;
    EXPECT_EQ(op_kernels(with, LayerOp::SHARED_EXPERTS, Pass::DGRAD, experts({8})).size(),
              op_kernels(without, LayerOp::SHARED_EXPERTS, Pass::DGRAD, experts({8})).size() + 7)
        << name;
  }
}

}  // namespace
}  // namespace moesim::cost
