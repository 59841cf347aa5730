#pragma once
/**
 * @file A small hand-made profile whose tables are simple enough to interpolate by hand in the
 * test comments. It is valid as written; tests mutate copies of it to produce bad inputs.
 */
#include <nlohmann/json.hpp>

#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::hw::testing {

/** @brief The document of the tiny profile (see the file for every value). */
inline nlohmann::json tiny_profile_document() {
  return nlohmann::json::parse(R"({
  "schema_version": 1, "name": "tiny", "description": "hand-made test profile",
  "provenance": {"kind": "datasheet", "sources": ["[T1] test"]},
  "gpu": {"name": "TestGPU", "sm_count": 100, "peak_clock_mhz": 1000, "max_boost_clock_mhz": 1200,
          "sustained_clock_factor": 0.5, "peak_tflops": {"bf16": 1000, "fp8": 2000},
          "hbm_GB": 80, "hbm_bw_GBps": 2000, "l2_MiB": 40, "llc_MiB": 0,
          "launch_overhead_us": 4, "graph_launch_overhead_us": 5, "graph_node_overhead_us": 1,
          "kernel_min_us": 2, "source": "test"},
  "efficiency": {
    "gemm": {"m": [16, 256], "min_nk": [1024, 4096], "value": [[0.1, 0.2], [0.5, 0.8]], "source": "test"},
    "gemm_dtype_factor": {"fp8": 0.9},
    "grouped_gemm_factor": 0.8,
    "attention_fwd": {"seq": [1024, 4096], "value": [0.4, 0.6], "source": "test"},
    "attention_bwd_factor": 0.5,
    "memory": {"bytes": [1048576, 16777216], "value": [0.3, 0.9], "source": "test"},
    "source": "test"},
  "node": {"gpus_per_node": 8,
           "fabric": {"type": "mesh", "link_bw_GBps": 64, "usable_link_bw_GBps": 48, "links_per_gpu": 7,
                      "per_gpu_bw_GBps": 448, "latency_us": 2, "source": "test"}},
  "network": {"nics_per_node": 8, "nic_gbps": 400, "nic_usable_GBps": 48, "latency_us": 10,
              "source": "test"},
  "collectives": [
    {"kind": "all_to_all", "scope": "intra", "gpus": 8, "algorithm": "direct", "step_latency_us": 10,
     "busbw": [{"bytes": 1048576, "GBps": 100}, {"bytes": 4194304, "GBps": 200}], "source": "test"},
    {"kind": "all_to_all", "scope": "intra", "gpus": 2, "algorithm": "direct", "step_latency_us": 5,
     "busbw": [{"bytes": 1048576, "GBps": 40}], "source": "test"},
    {"kind": "all_reduce", "scope": "intra", "gpus": 4, "algorithm": "ring", "step_latency_us": 1,
     "busbw": [{"bytes": 1048576, "GBps": 120}], "source": "test"},
    {"kind": "all_to_all", "scope": "inter", "gpus": 16, "algorithm": "direct", "step_latency_us": 30,
     "busbw": [{"bytes": 1048576, "GBps": 50}], "source": "test"}],
  "contention": {"comm_sms": 16, "compute_slowdown_with_comm": 1.05, "comm_slowdown_with_compute": 1.1,
                 "hbm_bytes_per_comm_byte": 0, "hbm_bytes_per_copy_byte": 0, "comm_hbm_weight": 1,
                 "source": "test"}
})");
}

/** @brief The optional "power" section with round numbers (add it as document["power"]). */
inline nlohmann::json tiny_power_section() {
  return nlohmann::json::parse(R"({
  "limit_w": 700, "idle_w": 100, "compute_w_at_peak": 1000, "hbm_pj_per_byte": 100, "link_pj_per_byte": 50,
  "speed_exponent": 2.5, "clock_rate_exponent": 0.6, "source": "test"})");
}

/** @brief The tiny profile, parsed and validated under the file name "tiny.json". */
inline HwProfile tiny_profile() {
  return profile_from_json(tiny_profile_document(), "tiny.json");
}

}  // namespace moesim::hw::testing
