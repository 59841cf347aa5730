// Bad inputs: each produces exactly one line naming the file, the JSON pointer, the value and the rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "TinyProfile.hpp"
#include "moesim/common/Error.hpp"

using moesim::ConfigError;
using moesim::hw::profile_from_json;
using moesim::hw::testing::tiny_power_section;
using moesim::hw::testing::tiny_profile_document;
using nlohmann::json;

namespace {

/** The message of the ConfigError that loading `edit`ed tiny profile raises as "bad.json". */
std::string error_after(const std::function<void(json&)>& edit) {
  json document = tiny_profile_document();
  edit(document);
  try {
    profile_from_json(document, "bad.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<accepted>";
}

}  // namespace

TEST(ProfileValidation, GemmShapesAreCheckedEntryByEntry) {
  auto with_shapes = [](json& d) {
    d["efficiency"]["gemm_shapes"] = {
        {"shapes", {{{"n", 1536}, {"k", 2048}, {"m", {256, 1024}}, {"value", {0.25, 0.6}}}}},
        {"source", "test"}};
  };
  EXPECT_EQ(error_after(with_shapes), "<accepted>");
  EXPECT_EQ(error_after([&](json& d) {
              with_shapes(d);
              d["efficiency"]["gemm_shapes"]["shapes"][0]["m"] = {1024, 256};
            }),
            "bad.json: /efficiency/gemm_shapes/shapes/0/m/1 = 256: must be > the previous entry (1024)");
  EXPECT_EQ(error_after([&](json& d) {
              with_shapes(d);
              d["efficiency"]["gemm_shapes"]["shapes"][0]["value"][1] = 1.2;
            }),
            "bad.json: /efficiency/gemm_shapes/shapes/0/value/1 = 1.2: must be in (0, 1]");
  EXPECT_EQ(error_after([&](json& d) {
              with_shapes(d);
              d["efficiency"]["gemm_shapes"]["shapes"].push_back(d["efficiency"]["gemm_shapes"]["shapes"][0]);
            }),
            "bad.json: /efficiency/gemm_shapes/shapes/1 repeats n = 1536, k = 2048 of "
            "/efficiency/gemm_shapes/shapes/0");
  EXPECT_EQ(error_after([&](json& d) {
              with_shapes(d);
              d["efficiency"]["gemm_shapes"]["shapes"][0]["n"] = 0;
            }).substr(0, 46),
            "bad.json: /efficiency/gemm_shapes/shapes/0/n =");
  EXPECT_EQ(error_after([&](json& d) {
              with_shapes(d);
              d["efficiency"]["gemm_shapes"]["shapes"][0]["min_nk"] = 4;
            }).substr(0, 50),
            "bad.json: /efficiency/gemm_shapes/shapes/0/min_nk ");
}

TEST(ProfileValidation, TinyProfileIsValid) {
  EXPECT_NO_THROW(moesim::hw::testing::tiny_profile());
}

TEST(ProfileValidation, ZeroBandwidthIsRejected) {
  EXPECT_EQ(error_after([](json& d) { d["node"]["fabric"]["link_bw_GBps"] = 0; }),
            "bad.json: /node/fabric/link_bw_GBps = 0: must be > 0");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["hbm_bw_GBps"] = 0; }),
            "bad.json: /gpu/hbm_bw_GBps = 0: must be > 0");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][0]["busbw"][1]["GBps"] = 0; }),
            "bad.json: /collectives/0/busbw/1/GBps = 0: must be > 0");
  EXPECT_EQ(error_after([](json& d) { d["network"]["nic_gbps"] = -400; }),
            "bad.json: /network/nic_gbps = -400: must be > 0");
}

TEST(ProfileValidation, ZeroBandwidthInARealFileNamesThatFile) {
  auto path = std::filesystem::temp_directory_path() / "moesim_hw_zero_bw.json";
  json document = tiny_profile_document();
  document["node"]["fabric"]["link_bw_GBps"] = 0;
  std::ofstream(path) << document.dump(2);
  try {
    moesim::hw::load_profile_file(path);
    FAIL() << "zero bandwidth accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": /node/fabric/link_bw_GBps = 0: must be > 0");
    EXPECT_EQ(e.json_pointer(), "/node/fabric/link_bw_GBps");
  }
  std::filesystem::remove(path);
}

TEST(ProfileValidation, UnknownAndMissingKeys) {
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["hbm_bw_GBs"] = 1; }),
            "bad.json: /gpu/hbm_bw_GBs is not a known key");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][2]["busbw"][0]["GBs"] = 1; }),
            "bad.json: /collectives/2/busbw/0/GBs is not a known key");
  EXPECT_EQ(error_after([](json& d) { d.erase("contention"); }),
            "bad.json: /contention is missing (required)");
  EXPECT_EQ(error_after([](json& d) { d["gpu"].erase("hbm_GB"); }),
            "bad.json: /gpu/hbm_GB is missing (required)");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["sm_count"] = "132"; }),
            "bad.json: /gpu/sm_count = \"132\": expected an integer");
  // A profile written before HBM sharing names what replaced its key.
  EXPECT_EQ(error_after([](json& d) { d["contention"]["hbm_interference"] = 1.05; }),
            "bad.json: /contention/hbm_interference = 1.05: was replaced by hbm_bytes_per_comm_byte, "
            "hbm_bytes_per_copy_byte and comm_hbm_weight (hwprofiles/FORMAT.md)");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["comm_hbm_weight"] = 0; }),
            "bad.json: /contention/comm_hbm_weight = 0: must be > 0");
}

TEST(ProfileValidation, EfficienciesMustBeFractions) {
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["gemm"]["value"][1][1] = 1.5; }),
            "bad.json: /efficiency/gemm/value/1/1 = 1.5: must be in (0, 1]");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["memory"]["value"][0] = 0; }),
            "bad.json: /efficiency/memory/value/0 = 0: must be in (0, 1]");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["grouped_gemm_factor"] = 1.2; }),
            "bad.json: /efficiency/grouped_gemm_factor = 1.2: must be in (0, 1]");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["sustained_clock_factor"] = 1.1; }),
            "bad.json: /gpu/sustained_clock_factor = 1.1: must be in (0, 1]");
}

TEST(ProfileValidation, UnknownDtypeInTheFile) {
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["peak_tflops"]["int4"] = 4000; }),
            "bad.json: /gpu/peak_tflops/int4 is not a known dtype (known: fp32, tf32, bf16, fp16, fp8)");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["gemm_dtype_factor"]["fp16"] = 0.9; }),
            "bad.json: /efficiency/gemm_dtype_factor/fp16 has no matching /gpu/peak_tflops/fp16");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["peak_tflops"] = json::object(); }),
            "bad.json: /gpu/peak_tflops must give at least one dtype");
}

TEST(ProfileValidation, SchemaVersionAndEnums) {
  EXPECT_EQ(error_after([](json& d) { d["schema_version"] = 2; }),
            "bad.json: /schema_version = 2: must be 1");
  EXPECT_EQ(error_after([](json& d) { d["node"]["fabric"]["type"] = "ring"; }),
            "bad.json: /node/fabric/type = \"ring\": must be one of switch, mesh");
  EXPECT_EQ(
      error_after([](json& d) { d["collectives"][0]["kind"] = "alltoall"; }),
      "bad.json: /collectives/0/kind = \"alltoall\": must be one of all_to_all, all_reduce, all_gather, "
      "reduce_scatter");
  EXPECT_EQ(error_after([](json& d) { d["provenance"]["kind"] = "guess"; }),
            "bad.json: /provenance/kind = \"guess\": must be one of datasheet, published, calibrated");
}

TEST(ProfileValidation, TableAxesAndSizes) {
  EXPECT_EQ(error_after([](json& d) {
              d["efficiency"]["memory"]["bytes"] = {16777216, 1048576};
            }),
            "bad.json: /efficiency/memory/bytes/1 = 1048576: must be > the previous entry (16777216)");
  EXPECT_EQ(error_after([](json& d) {
              d["efficiency"]["gemm"]["m"] = {16, 16};
            }),
            "bad.json: /efficiency/gemm/m/1 = 16: must be > the previous entry (16)");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["gemm"]["value"].erase(1); }),
            "bad.json: /efficiency/gemm/value has 1 entries: must have one per m entry (2)");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["gemm"]["value"][0] = json::array({0.1}); }),
            "bad.json: /efficiency/gemm/value/0 has 1 entries: must have one per min_nk entry (2)");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["attention_fwd"]["value"] = json::array({0.4}); }),
            "bad.json: /efficiency/attention_fwd/value has 1 entries: must have one per seq entry (2)");
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["attention_fwd"]["batch_heads"] = 0; }),
            "bad.json: /efficiency/attention_fwd/batch_heads = 0: must be a positive integer");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][0]["busbw"][1]["bytes"] = 1000; }),
            "bad.json: /collectives/0/busbw/1/bytes = 1000: must be > the previous entry (1048576)");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][0]["busbw"] = json::array(); }),
            "bad.json: /collectives/0/busbw must not be empty");
}

TEST(ProfileValidation, FabricConsistency) {
  EXPECT_EQ(error_after([](json& d) { d["node"]["fabric"]["per_gpu_bw_GBps"] = 400; }),
            "bad.json: /node/fabric/per_gpu_bw_GBps = 400: must equal link_bw_GBps * links_per_gpu (448)");
  EXPECT_EQ(error_after([](json& d) {
              d["node"]["fabric"]["links_per_gpu"] = 6;
              d["node"]["fabric"]["per_gpu_bw_GBps"] = 384;
            }),
            "bad.json: /node/fabric/links_per_gpu = 6: a full mesh needs gpus_per_node - 1 (7) links");
  EXPECT_EQ(error_after([](json& d) { d["node"]["fabric"]["usable_link_bw_GBps"] = 70; }),
            "bad.json: /node/fabric/usable_link_bw_GBps = 70: must be <= link_bw_GBps (64)");
  EXPECT_EQ(error_after([](json& d) { d["network"]["nic_usable_GBps"] = 60; }),
            "bad.json: /network/nic_usable_GBps = 60: must be <= nic_gbps / 8 (50)");
}

TEST(ProfileValidation, CollectiveGroupsAndLatency) {
  EXPECT_EQ(error_after([](json& d) { d["collectives"][0]["gpus"] = 16; }),
            "bad.json: /collectives/0/gpus = 16: must be <= /node/gpus_per_node (8) for scope intra");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][3]["gpus"] = 8; }),
            "bad.json: /collectives/3/gpus = 8: must be > /node/gpus_per_node (8) for scope inter");
  // A table may cover any cluster: the profile does not cap the node count.
  EXPECT_EQ(error_after([](json& d) { d["collectives"][3]["gpus"] = 1024; }), "<accepted>");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][2]["step_latency_us"] = -1; }),
            "bad.json: /collectives/2/step_latency_us = -1: must be >= 0");
  EXPECT_EQ(error_after([](json& d) { d["collectives"][1]["gpus"] = 8; }),
            "bad.json: /collectives/1 duplicates /collectives/0 (all_to_all, intra, 8 GPUs)");
}

TEST(ProfileValidation, LegacyMaxNodesIsReadAndIgnored) {
  // Profiles written before the node count became the scenario's carry network.max_nodes.
  EXPECT_EQ(error_after([](json& d) { d["network"]["max_nodes"] = 4; }), "<accepted>");
  EXPECT_NE(error_after([](json& d) { d["network"]["max_nodes"] = "four"; }), "<accepted>");
}

TEST(ProfileValidation, ContentionRules) {
  EXPECT_EQ(error_after([](json& d) { d["contention"]["comm_sms"] = 100; }),
            "bad.json: /contention/comm_sms = 100: must be < /gpu/sm_count (100)");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["compute_slowdown_with_comm"] = 0.9; }),
            "bad.json: /contention/compute_slowdown_with_comm = 0.9: must be >= 1");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["memory_slowdown_with_comm"] = 0.8; }),
            "bad.json: /contention/memory_slowdown_with_comm = 0.8: must be >= 1");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["sm_count"] = 0; }),
            "bad.json: /gpu/sm_count = 0: must be > 0");
}

TEST(ProfileValidation, RouterTopkTableIsCheckedPointByPoint) {
  auto with_table = [](json& d) {
    d["efficiency"]["router_topk"] = {{"points", json::array({{{"top_k", 2},
                                                               {"experts", 8},
                                                               {"fixed_us", 4},
                                                               {"ns_per_token", 1.7},
                                                               {"comm_slowdown", 1},
                                                               {"comm_drag", 1.3}},
                                                              {{"top_k", 8},
                                                               {"experts", 128},
                                                               {"fixed_us", 8},
                                                               {"ns_per_token", 3.5},
                                                               {"comm_slowdown", 1.17},
                                                               {"comm_drag", 1.56}}})},
                                      {"source", "test"}};
  };
  EXPECT_EQ(error_after(with_table), "<accepted>");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["efficiency"]["router_topk"]["points"][1]["top_k"] = 2;
            }),
            "bad.json: /efficiency/router_topk/points/1/top_k = 2: must be > the previous entry (2)");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["efficiency"]["router_topk"]["points"][0]["experts"] = 1;
            }),
            "bad.json: /efficiency/router_topk/points/0/experts = 1: must be >= top_k (2)");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["efficiency"]["router_topk"]["points"][1]["comm_drag"] = 0.9;
            }),
            "bad.json: /efficiency/router_topk/points/1/comm_drag = 0.9: must be >= 1");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["efficiency"]["router_topk"]["points"][0].erase("ns_per_token");
            }),
            "bad.json: /efficiency/router_topk/points/0/ns_per_token is missing (required)");
}

TEST(ProfileValidation, GemmSlowdownByLengthIsCheckedPointByPoint) {
  auto with_table = [](json& d) {
    d["contention"]["gemm_slowdown_with_comm"] =
        json::array({{{"kernel_us", 10}, {"slowdown", 1.2}}, {{"kernel_us", 40}, {"slowdown", 1.6}}});
  };
  EXPECT_EQ(error_after(with_table), "<accepted>");
  EXPECT_EQ(
      error_after([&](json& d) {
        with_table(d);
        d["contention"]["gemm_slowdown_with_comm"][1]["kernel_us"] = 10;
      }),
      "bad.json: /contention/gemm_slowdown_with_comm/1/kernel_us = 10: must be > the previous entry (10)");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["contention"]["gemm_slowdown_with_comm"][0]["slowdown"] = 0.8;
            }),
            "bad.json: /contention/gemm_slowdown_with_comm/0/slowdown = 0.8: must be >= 1");
  EXPECT_EQ(error_after([&](json& d) {
              with_table(d);
              d["contention"]["gemm_slowdown_with_comm"][0].erase("slowdown");
            }),
            "bad.json: /contention/gemm_slowdown_with_comm/0/slowdown is missing (required)");
}

TEST(ProfileValidation, ProvenanceRules) {
  EXPECT_EQ(error_after([](json& d) { d["provenance"]["kind"] = "calibrated"; }),
            "bad.json: /provenance/date is missing (required when kind is calibrated)");
  EXPECT_EQ(error_after([](json& d) { d["provenance"]["sources"] = json::array(); }),
            "bad.json: /provenance/sources must list at least one source");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["source"] = ""; }),
            "bad.json: /gpu/source = \"\": must not be empty");
}

TEST(ProfileValidation, PowerSectionIsOptionalAndStrict) {
  EXPECT_EQ(error_after([](json&) {}), "<accepted>");
  EXPECT_EQ(error_after([](json& d) { d["power"] = tiny_power_section(); }), "<accepted>");
  EXPECT_EQ(error_after([](json& d) {
              d["power"] = tiny_power_section();
              d["power"].erase("speed_exponent");
            }),
            "bad.json: /power/speed_exponent is missing (required)");
  EXPECT_EQ(error_after([](json& d) {
              d["power"] = tiny_power_section();
              d["power"]["hbm_j_per_byte"] = 1e-10;
            }),
            "bad.json: /power/hbm_j_per_byte is not a known key");
  EXPECT_EQ(error_after([](json& d) { d["power"] = "700 W"; }),
            "bad.json: /power = \"700 W\": expected an object");
}

TEST(ProfileValidation, PowerRules) {
  auto power_error = [](const char* key, double value) {
    return error_after([&](json& d) {
      d["power"] = tiny_power_section();
      d["power"][key] = value;
    });
  };
  EXPECT_EQ(power_error("limit_w", 100), "bad.json: /power/limit_w = 100: must be > /power/idle_w (100)");
  EXPECT_EQ(power_error("idle_w", 0), "bad.json: /power/idle_w = 0: must be > 0");
  EXPECT_EQ(power_error("compute_w_at_peak", -5), "bad.json: /power/compute_w_at_peak = -5: must be > 0");
  // Shown in the file's unit (pJ/byte), not in J/byte.
  EXPECT_EQ(power_error("hbm_pj_per_byte", -2.5), "bad.json: /power/hbm_pj_per_byte = -2.5: must be >= 0");
  EXPECT_EQ(power_error("link_pj_per_byte", -1), "bad.json: /power/link_pj_per_byte = -1: must be >= 0");
  EXPECT_EQ(power_error("speed_exponent", 1), "bad.json: /power/speed_exponent = 1: must be > 1");
  EXPECT_EQ(power_error("clock_rate_exponent", 0),
            "bad.json: /power/clock_rate_exponent = 0: must be in (0, 1.5]");
  EXPECT_EQ(power_error("clock_rate_exponent", 1.6),
            "bad.json: /power/clock_rate_exponent = 1.6: must be in (0, 1.5]");
  EXPECT_EQ(power_error("link_pj_per_byte", 0), "<accepted>");
  EXPECT_EQ(power_error("clock_rate_exponent", 1.5), "<accepted>");
}

// Physical bounds: one class each of the values the validator accepted although the engine could not run
// them (issue 31). The ranges come from docs/limits.md; each test puts a value just past a bound and the
// bound itself.
TEST(PhysicalBounds, Clocks) {
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["peak_clock_mhz"] = 50; }),
            "bad.json: /gpu/peak_clock_mhz = 50: must be in [100, 10000] (physical bound, docs/limits.md)");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["max_boost_clock_mhz"] = 1e9; }),
            "bad.json: /gpu/max_boost_clock_mhz = 1000000000: must be in [100, 10000] (physical bound, "
            "docs/limits.md)");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["max_boost_clock_mhz"] = 10000; }), "<accepted>");
}

TEST(PhysicalBounds, AttentionRowOverhead) {
  const auto rows = [](double keys, const char* source) {
    return error_after([&](json& d) {
      d["efficiency"]["attention_rows"] = {{"overhead_keys", keys}, {"source", source}};
    });
  };
  EXPECT_EQ(rows(-1, "m"),
            "bad.json: /efficiency/attention_rows/overhead_keys = -1: must be in [0, 65536] "
            "(physical bound, docs/limits.md)");
  EXPECT_EQ(rows(223, ""), "bad.json: /efficiency/attention_rows/source = \"\": must not be empty");
  EXPECT_EQ(rows(65536, "m"), "<accepted>");
}

TEST(PhysicalBounds, Bandwidths) {
  // A denormal bandwidth made every transfer longer than simulated time can hold ("op never finished").
  EXPECT_EQ(error_after([](json& d) {
              d["gpu"]["hbm_bw_GBps"] = 1e-310;
            }).rfind("bad.json: /gpu/hbm_bw_GBps = 9.99999999999997e-311: must be in [0.001, 1000000]", 0),
            0u);
  EXPECT_EQ(error_after([](json& d) { d["collectives"][0]["busbw"][1]["GBps"] = 1e7; }),
            "bad.json: /collectives/0/busbw/1/GBps = 10000000: must be in [0.001, 1000000] (physical bound, "
            "docs/limits.md)");
  // 1e308 GB/s is inf bytes/s: refused where it is read, as the file wrote it.
  EXPECT_EQ(
      error_after([](json& d) { d["collectives"][0]["busbw"][1]["GBps"] = 1e308; }),
      "bad.json: /collectives/0/busbw/1/GBps = 1e+308: is too large to be a physical value (docs/limits.md)");
  EXPECT_EQ(error_after([](json& d) {
              d["node"]["fabric"]["link_bw_GBps"] = 1e-4;
              d["node"]["fabric"]["usable_link_bw_GBps"] = 1e-4;
              d["node"]["fabric"]["per_gpu_bw_GBps"] = 7e-4;
            }),
            "bad.json: /node/fabric/link_bw_GBps = 0.0001: must be in [0.001, 1000000] (physical bound, "
            "docs/limits.md)");
}

TEST(PhysicalBounds, StreamingMultiprocessors) {
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["sm_count"] = 1000000; }),
            "bad.json: /gpu/sm_count = 1000000: must be in [1, 65536] (physical bound, docs/limits.md)");
  // A communication kernel on 0 SMs never moved a byte; on all of them it left compute nothing.
  EXPECT_EQ(error_after([](json& d) { d["contention"]["comm_sms"] = 0; }),
            "bad.json: /contention/comm_sms = 0: must be >= 1");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["comm_sms"] = 100; }),
            "bad.json: /contention/comm_sms = 100: must be < /gpu/sm_count (100)");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["comm_sms"] = 1; }), "<accepted>");
}

TEST(PhysicalBounds, LaunchOverheadsAndLatencies) {
  EXPECT_EQ(
      error_after([](json& d) { d["gpu"]["launch_overhead_us"] = 1e308; }),
      "bad.json: /gpu/launch_overhead_us = 1e+308: must be in [0, 10000] (physical bound, docs/limits.md)");
  EXPECT_EQ(error_after([](json& d) { d["gpu"]["kernel_min_us"] = 20000; }),
            "bad.json: /gpu/kernel_min_us = 20000: must be in [0, 10000] (physical bound, docs/limits.md)");
  EXPECT_EQ(
      error_after([](json& d) { d["network"]["latency_us"] = 2e6; }),
      "bad.json: /network/latency_us = 2000000: must be in [0, 1000000] (physical bound, docs/limits.md)");
}

TEST(PhysicalBounds, EfficienciesAndSlowdowns) {
  EXPECT_EQ(error_after([](json& d) { d["efficiency"]["memory"]["value"][0] = 1e-300; }),
            "bad.json: /efficiency/memory/value/0 = 1e-300: must be >= 0.0001");
  EXPECT_EQ(error_after([](json& d) { d["contention"]["compute_slowdown_with_comm"] = 1e308; }),
            "bad.json: /contention/compute_slowdown_with_comm = 1e+308: must be in [1, 100] (physical bound, "
            "docs/limits.md)");
}

TEST(ProfileValidation, TileGemmRatesAreFractionsOfDtypesWithAPeak) {
  auto with_tiles = [](json& d) {
    d["efficiency"]["tile_gemm"] = {{"tile", {{"m", 128}, {"n", 64}, {"k", 8}}},
                                    {"blocks_per_sm", 2},
                                    {"value", {{"bf16", 0.1}}},
                                    {"source", "test"}};
  };
  EXPECT_EQ(error_after(with_tiles), "<accepted>");
  EXPECT_EQ(error_after([&](json& d) {
              with_tiles(d);
              d["efficiency"]["tile_gemm"]["value"]["bf16"] = 1.5;
            }),
            "bad.json: /efficiency/tile_gemm/value/bf16 = 1.5: must be in (0, 1]");
  EXPECT_EQ(error_after([&](json& d) {
              with_tiles(d);
              d["efficiency"]["tile_gemm"]["value"] = json::object();
            }),
            "bad.json: /efficiency/tile_gemm/value must give at least one dtype");
  EXPECT_EQ(error_after([&](json& d) {
              with_tiles(d);
              d["efficiency"]["tile_gemm"]["tile"].erase("k");
            }),
            "bad.json: /efficiency/tile_gemm/tile/k is missing (required)");
}
