// calibrate(): measured parts replace the base profile's, with hand-computed expectations.
#include "moesim/calibrate/Calibrator.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "SyntheticPower.hpp"
#include "moesim/calibrate/ProfileText.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"

namespace moesim::calibrate {
namespace {

const std::string kData = MOESIM_CALIBRATE_TEST_DATA;

// A small switch-fabric profile: 100 SMs, bf16 1000 TF/s x sustained 0.5 = 500 TF/s, fp8 twice that;
// fabric port 18 x 20 GB/s = 360 GB/s.
hw::HwProfile base_profile() {
  return hw::profile_from_json(nlohmann::json::parse(R"({
  "schema_version": 1, "name": "testgpu", "description": "test node.",
  "provenance": {"kind": "published", "sources": ["[T1] test"]},
  "gpu": {"name": "TestGPU", "sm_count": 100, "peak_clock_mhz": 1000, "max_boost_clock_mhz": 1200,
          "sustained_clock_factor": 0.5, "peak_tflops": {"bf16": 1000, "fp8": 2000},
          "hbm_GB": 80, "hbm_bw_GBps": 2000, "l2_MiB": 40, "llc_MiB": 0, "launch_overhead_us": 4,
          "graph_launch_overhead_us": 5, "graph_node_overhead_us": 1, "kernel_min_us": 2, "source": "test"},
  "efficiency": {
    "gemm": {"m": [16, 256], "min_nk": [1024, 4096], "value": [[0.3, 0.3], [0.3, 0.3]], "source": "test"},
    "gemm_dtype_factor": {"fp8": 0.5}, "grouped_gemm_factor": 0.8,
    "attention_fwd": {"seq": [1024, 4096], "value": [0.4, 0.6], "source": "test"}, "attention_bwd_factor": 0.5,
    "memory": {"bytes": [1048576, 16777216], "value": [0.3, 0.9], "source": "test"}, "source": "test"},
  "node": {"gpus_per_node": 8, "fabric": {"type": "switch", "link_bw_GBps": 25, "usable_link_bw_GBps": 20,
           "links_per_gpu": 18, "per_gpu_bw_GBps": 450, "latency_us": 2, "source": "test"}},
  "network": {"nics_per_node": 8, "nic_gbps": 400, "nic_usable_GBps": 48, "latency_us": 10, "max_nodes": 4,
              "source": "test"},
  "collectives": [
    {"kind": "all_to_all", "scope": "intra", "gpus": 2, "algorithm": "direct", "step_latency_us": 5,
     "busbw": [{"bytes": 1048576, "GBps": 40}], "source": "base a2a"}],
  "contention": {"comm_sms": 16, "compute_slowdown_with_comm": 1.05, "comm_slowdown_with_compute": 1.1,
                 "hbm_bytes_per_comm_byte": 0, "hbm_bytes_per_copy_byte": 0, "comm_hbm_weight": 1,
                 "source": "base"}})"),
                               "testgpu.json");
}

RunInfo run(const std::string& file, const std::string& benchmark, int gpus) {
  RunInfo r;
  r.file = file;
  r.benchmark = benchmark;
  r.start_time = "2026-11-21T10:00:00Z";
  r.gpu_api = "CUDA";
  r.driver = "580.1";
  r.driver_api = "13.0";
  r.runtime = "13.0";
  r.libraries = {{"cuBLASLt", "13.1.0"}};
  r.gpu_name = "TestGPU";
  r.gpu_arch = "sm_90";
  r.gpu_count = gpus;
  r.sm_count = 100;
  return r;
}

// The time of an m x n x k GEMM at `efficiency` of a `sustained` FLOP/s peak.
double gemm_time(double m, double n, double k, double efficiency, double sustained) {
  return 2 * m * n * k / (efficiency * sustained);
}

CalibrationInputs inputs() {
  CalibrationInputs in;
  BenchResults& b = in.bench;
  b.runs = {run("gemm.json", "gemm", 1), run("coll.json", "collectives", 2),
            run("cont.json", "contention", 2), run("launch.json", "launch", 1)};
  // bf16 at the four grid nodes: efficiencies 0.1 0.2 / 0.5 0.8 of 500 TF/s.
  const double bf16 = 500e12, fp8 = 1000e12;
  b.gemm = {{"a", 16, 1024, 1024, "bf16", gemm_time(16, 1024, 1024, 0.1, bf16)},
            {"b", 16, 4096, 8192, "bf16", gemm_time(16, 4096, 8192, 0.2, bf16)},
            {"c", 256, 8192, 1024, "bf16", gemm_time(256, 8192, 1024, 0.5, bf16)},
            {"d", 256, 4096, 4096, "bf16", gemm_time(256, 4096, 4096, 0.8, bf16)},
            // fp8 at (256, 4096): 0.72 of the fp8 peak where the bf16 table says 0.8 -> factor 0.9
            {"d8", 256, 4096, 4096, "fp8", gemm_time(256, 4096, 4096, 0.72, fp8)}};
  // all_to_all on 2 GPUs: alpha 10 us; 8 MiB at 30 us -> 4194304 B / 20 us = 209.7152 GB/s.
  b.collectives = {{"all_to_all", 2, 1, 1024, 10e-6, "coll.json"},
                   {"all_to_all", 2, 1, 8388608, 30e-6, "coll.json"}};
  ContentionCase capped;  // 10 CTAs, collective longer than the GEMM: 1.1 x 100/90 -> r = 1.1
  capped.comm = "all_to_all";
  capped.bytes = 512.0 * 1048576;
  capped.ctas = 10;
  capped.ranks = 2;
  capped.gemm_m = 4096;
  capped.gemm_n = 4096;
  capped.gemm_k = 4096;
  capped.compute_alone_s = 1000e-6;
  capped.compute_with_comm_s = 1000e-6 * 1.1 * 100 / 90;
  capped.comm_alone_s = 2000e-6;
  capped.comm_with_compute_s = 2400e-6;
  capped.file = "cont.json";
  ContentionCase spans = capped;  // default CTAs, spans the GEMM: 1.375 = 1.1 x 100/(100 - c) -> c = 20
  spans.ctas = 0;
  spans.compute_with_comm_s = 1375e-6;
  spans.comm_with_compute_s = 2900e-6;
  ContentionCase short_comm = spans;  // default CTAs, shorter than the GEMM: ends with it
  short_comm.bytes = 64.0 * 1048576;
  short_comm.comm_alone_s = 200e-6;
  short_comm.comm_with_compute_s = 1000e-6;
  short_comm.compute_with_comm_s = 1050e-6;
  ContentionCase peer_copy = capped;  // copy-engine peer copies: the GEMM slows 1.08x
  peer_copy.comm = "ce_copy";
  peer_copy.ctas.reset();
  peer_copy.compute_with_comm_s = 1080e-6;
  ContentionCase local_copy = peer_copy;  // a device-local copy (twice the HBM traffic): not fitted
  local_copy.ranks = 1;
  local_copy.compute_with_comm_s = 1200e-6;
  // The streaming add (4000 GB/s alone) beside peer copies and a capped NCCL all-to-all: HBM sharing.
  ContentionCase add_copy = peer_copy;  // 400 MB in 1 ms (400 GB/s bus) takes 0.2 of the HBM
  add_copy.compute = "add";
  add_copy.compute_hbm_Bps = 4000e9;
  add_copy.bytes = 400e6;
  add_copy.compute_alone_s = 100e-6;
  add_copy.compute_with_comm_s = 125e-6;
  add_copy.comm_alone_s = 1000e-6;
  add_copy.comm_with_compute_s = 1000e-6;
  ContentionCase add_nccl =
      add_copy;  // 8 CTAs; bus bytes 256 MB in 2570 - 10 us = 100 GB/s; add 1/0.9 slower
  add_nccl.comm = "all_to_all";
  add_nccl.ctas = 8;
  add_nccl.bytes = 512e6;
  add_nccl.compute_with_comm_s = 100e-6 / 0.9;
  add_nccl.comm_alone_s = 1000e-6;
  add_nccl.comm_with_compute_s = 2570e-6;
  b.contention = {capped, spans, short_comm, peer_copy, local_copy, add_copy, add_nccl};
  b.launch = {{"launch_host", 4.2e-6},       {"launch_host", 4.4e-6},       {"graph_host_1", 1.25e-6},
              {"graph_device_10", 0.6e-6},   {"graph_device_1000", 0.5e-6}, {"launch_device", 1.3e-6},
              {"copy_launch_host", 5e-6},    {"copy_launch_host", 6e-6},    {"eager_device_gemm", 9e-6},
              {"graph_device_gemm", 7.75e-6}};
  return in;
}

TEST(Calibrator, FitsEveryMeasuredPart) {
  const CalibrationResult r = calibrate(base_profile(), inputs());
  const hw::HwProfile& p = r.profile;
  // GEMM grid: each node measured once.
  EXPECT_EQ(p.efficiency.gemm.value, (std::vector<std::vector<double>>{{0.1, 0.2}, {0.5, 0.8}}));
  EXPECT_DOUBLE_EQ(p.efficiency.gemm_dtype_factor.at("fp8"), 0.9);
  // Every bf16 (n, k) becomes a measured curve: the four shapes are distinct, one m each.
  const auto& shapes = p.efficiency.gemm_shapes.shapes;
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].n, 1024);  // ordered by (n, k)
  EXPECT_EQ(shapes[0].k, 1024);
  EXPECT_EQ(shapes[0].m, std::vector<double>{16});
  EXPECT_EQ(shapes[0].value, std::vector<double>{0.1});
  EXPECT_NE(p.efficiency.gemm_shapes.source.find("4 bf16 shapes (n, k) at 4 measured m"), std::string::npos)
      << p.efficiency.gemm_shapes.source;
  // A measured shape keeps its own rate at other m (16 rows of n 4096, k 8192 at 0.2: 8 rows take the same
  // time, 0.1; 64 rows keep 0.2), where the table blends it with every shape of min(n, k) 4096.
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(8, 4096, 8192), 0.1);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency(64, 4096, 8192), 0.2);
  EXPECT_GT(p.gemm_table_efficiency(64, 4096, 8192), 0.2);
  // Collective: replaced in place, 10 us one step, 209.7152 GB/s rounded to 4 digits.
  ASSERT_EQ(p.collectives.size(), 1u);
  const hw::CollectiveTable& t = p.collectives[0];
  EXPECT_EQ(t.gpus, 2);
  EXPECT_DOUBLE_EQ(t.step_latency_s, 10e-6);
  EXPECT_EQ(t.bytes, std::vector<double>{8388608});
  EXPECT_DOUBLE_EQ(t.busbw_Bps[0], 209.7e9);
  // Contention: r = 1.1, comm_sms = 20. The default-CTA case that outlasts its 1375 us GEMM waits half a
  // GEMM, then runs s x its transfer: s = (2900 - 687.5 - 10) / (2000 - 10) = 1.10678 -> 1.107 (latency =
  // 1 step x 10 us). The short case (200 us alone, 1000 us beside a 1050 us GEMM) is not fitted.
  EXPECT_DOUBLE_EQ(p.contention.compute_slowdown_with_comm, 1.1);
  EXPECT_EQ(p.contention.comm_sms, 20);
  EXPECT_DOUBLE_EQ(p.contention.comm_slowdown_with_compute, 1.107);
  EXPECT_DOUBLE_EQ(p.contention.compute_slowdown_with_copy, 1.08);  // the peer-copy case only
  EXPECT_TRUE(p.contention.gemm_kernel_s.empty());                  // one GEMM shape: no slowdown by length
  // HBM sharing: the copies took 0.2 x 4000 GB/s for 400 GB/s of bus → 2 bytes per byte; NCCL took
  // 0.1 x 4000 for 100 → 4; its 8 CTAs held 0.1 against the add's 92 SMs: 0.1 x 92 / (8 x 0.9) = 1.2778.
  EXPECT_DOUBLE_EQ(p.contention.hbm_bytes_per_copy_byte, 2.0);
  EXPECT_DOUBLE_EQ(p.contention.hbm_bytes_per_comm_byte, 4.0);
  EXPECT_DOUBLE_EQ(p.contention.comm_hbm_weight, 1.278);
  EXPECT_NE(p.contention.source.find("4096x4096x4096 bf16 GEMM"), std::string::npos) << p.contention.source;
  // Launch: medians of the p50s; the largest graph gives the per-node cost.
  EXPECT_DOUBLE_EQ(p.gpu.launch_overhead_s, 4.3e-6);
  EXPECT_DOUBLE_EQ(p.gpu.copy_launch_overhead_s, 5.5e-6);
  EXPECT_DOUBLE_EQ(p.gpu.graph_launch_overhead_s, 1.25e-6);
  EXPECT_DOUBLE_EQ(p.gpu.graph_node_overhead_s, 0.5e-6);
  EXPECT_DOUBLE_EQ(p.gpu.kernel_min_s, 1.3e-6);
  // A named (layer-kernel) sequence is not a graph size; its eager excess is reported: 9 - 7.75 = 1.25 us.
  EXPECT_NE(p.gpu.source.find("layer kernels (launch_bench, us): gemm 1.25;"), std::string::npos)
      << p.gpu.source;
  // Not measured: kept.
  EXPECT_EQ(p.efficiency.attention_fwd.value, (std::vector<double>{0.4, 0.6}));
  EXPECT_DOUBLE_EQ(p.efficiency.grouped_gemm_factor, 0.8);
  // Provenance.
  EXPECT_EQ(p.provenance.kind, hw::ProvenanceKind::CALIBRATED);
  EXPECT_EQ(p.provenance.date, "2026-11-21");
  EXPECT_EQ(p.provenance.device, "2x TestGPU (sm_90, 100 SMs)");
  EXPECT_EQ(p.provenance.driver, "580.1 (CUDA driver API 13.0, runtime 13.0)");
  EXPECT_EQ(p.provenance.libraries, "cuBLASLt 13.1.0");
  EXPECT_EQ(p.provenance.sources.front(), "[C1] gemm.json: gemm on 1x TestGPU, 2026-11-21T10:00:00Z");
  EXPECT_EQ(p.provenance.sources.back(), "[T1] test");
  // The residuals: the GEMM table reproduces its own nodes exactly.
  ASSERT_FALSE(r.residuals.empty());
  EXPECT_EQ(r.residuals[0].table, "gemm bf16");
  EXPECT_EQ(r.residuals[0].points, 4);
  EXPECT_NEAR(r.residuals[0].max_rel, 0, 1e-9);
  const std::string report = format_residuals(r);
  for (std::size_t at = 0; at < report.size(); at = report.find('\n', at) + 1)
    EXPECT_EQ(report[at], '#') << report;
}

TEST(Calibrator, ShorterGemmShapesGiveTheSlowdownByLength) {
  CalibrationInputs in = inputs();
  // A 1024x4096x4096 GEMM of 250 us (256 tiles of 128x128: it fills the 100 SMs) 1.5x slower beside 10 CTAs
  // (stretch 100/90 -> residual 1.35) and beside the default CTAs (comm_sms 20: stretch 1.25 -> 1.2); a
  // collective shorter than it (3x) does not count. Geometric mean sqrt(1.35 x 1.2) = 1.27279 -> 1.273.
  ContentionCase shorter = in.bench.contention.front();
  shorter.gemm_m = 1024;
  shorter.compute_alone_s = 250e-6;
  shorter.compute_with_comm_s = 375e-6;
  ContentionCase shorter_default = shorter;
  shorter_default.ctas = 0;
  ContentionCase shorter_comm = shorter;
  shorter_comm.comm_alone_s = 100e-6;
  shorter_comm.compute_with_comm_s = 750e-6;
  for (const ContentionCase& k : {shorter, shorter_default, shorter_comm}) in.bench.contention.push_back(k);
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  // The reference (the longest shape, 1000 us) keeps its factors: r 1.1 (both spanning cases), 20 SMs.
  EXPECT_DOUBLE_EQ(p.contention.compute_slowdown_with_comm, 1.1);
  EXPECT_EQ(p.contention.comm_sms, 20);
  EXPECT_DOUBLE_EQ(p.contention.comm_slowdown_with_compute, 1.107);
  EXPECT_EQ(p.contention.gemm_kernel_s, (std::vector<double>{250e-6, 1000e-6}));
  EXPECT_EQ(p.contention.gemm_slowdown, (std::vector<double>{1.273, 1.1}));
  // 500 us is half way in log length: (1.273 + 1.1) / 2.
  EXPECT_NEAR(p.gemm_slowdown_with_comm(500e-6), 1.1865, 1e-12);
  EXPECT_NE(p.contention.source.find("1024x4096x4096 250.0 us 1.273 (2 cases"), std::string::npos)
      << p.contention.source;
}

// The router's top-k: a line per top_k through the one-GPU alone times, and its factors beside NCCL.
TEST(Calibrator, RouterTopkTableFromTopkRuns) {
  CalibrationInputs in = inputs();
  in.bench.runs.push_back(run("topk1.json", "contention", 1));
  in.bench.runs.push_back(run("topk4.json", "contention", 4));
  auto topk = [](std::int64_t top_k, std::int64_t experts, std::int64_t tokens, double alone_s, int ranks) {
    ContentionCase k;
    k.compute = "topk";
    k.comm = ranks == 1 ? "ce_copy" : "all_to_all";
    k.bytes = 32.0 * 1048576;
    if (ranks > 1) k.ctas = 0;
    k.ranks = ranks;
    k.top_k = top_k;
    k.experts = experts;
    k.tokens = tokens;
    k.compute_alone_s = alone_s;
    k.comm_alone_s = 100e-6;
    k.file = ranks == 1 ? "topk1.json" : "topk4.json";
    return k;
  };
  // k 8: 12 us at 1000 tokens and 20 us at 3000 on one GPU -> 8 us + 4 ns/token. On four GPUs the alone time
  // (24 us) is not used for the line; beside default-CTA NCCL (comm_sms 20 of 100: stretch 1.25) it took
  // 36 us = 24 x 1.25 x 1.2 -> comm_slowdown 1.2, and the collective took 142 us against 100 alone:
  // (142 - 24 / 2) / 100 = 1.3.
  ContentionCase nccl = topk(8, 128, 3000, 24e-6, 4);
  nccl.compute_with_comm_s = 36e-6;
  nccl.comm_with_compute_s = 142e-6;
  // k 2: one token count, 10 us at 2000 -> through the origin, 5 ns/token; no NCCL case -> the platform's
  // compute_slowdown_with_comm (1.1) and comm_slowdown_with_compute (1.107).
  for (const ContentionCase& k :
       {topk(8, 128, 1000, 12e-6, 1), topk(8, 128, 3000, 20e-6, 1), nccl, topk(2, 8, 2000, 10e-6, 1)})
    in.bench.contention.push_back(k);
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  const hw::RouterTopkTable& t = p.efficiency.router_topk;
  EXPECT_EQ(t.top_k, (std::vector<double>{2, 8}));
  EXPECT_EQ(t.experts, (std::vector<double>{8, 128}));
  ASSERT_EQ(t.fixed_s.size(), 2u);
  EXPECT_NEAR(t.fixed_s[0], 0, 1e-15);
  EXPECT_NEAR(t.fixed_s[1], 8e-6, 1e-15);
  EXPECT_NEAR(t.s_per_token[0], 5e-9, 1e-18);
  EXPECT_NEAR(t.s_per_token[1], 4e-9, 1e-18);
  EXPECT_EQ(t.comm_slowdown, (std::vector<double>{1.1, 1.2}));
  EXPECT_EQ(t.comm_drag, (std::vector<double>{1.107, 1.3}));
  // k 4 is half way from 2 to 8 in log k: 4 us + 4.5 ns/token -> 13 us at 2000 tokens.
  const auto cost = p.router_topk(2000, 4);
  ASSERT_TRUE(cost.has_value());
  EXPECT_NEAR(cost->time_s, 13e-6, 1e-15);
  EXPECT_NEAR(cost->comm_drag, (1.107 + 1.3) / 2, 1e-12);
  // One top_k measured at two expert counts is refused, naming the file.
  in.bench.contention.push_back(topk(8, 64, 1000, 12e-6, 1));
  try {
    calibrate(base_profile(), in);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("topk1.json: /options/experts = 64"), std::string::npos) << e.what();
  }
}

TEST(Calibrator, MemoryKernelSlowdownFromRmsnormRuns) {
  CalibrationInputs in = inputs();
  in.bench.runs.push_back(run("norm4.json", "contention", 4));
  auto norm = [](const std::string& comm, double alone_s, double with_s) {
    ContentionCase k;
    k.compute = "rmsnorm";
    k.comm = comm;
    k.bytes = 32.0 * 1048576;
    k.ctas = 0;
    k.ranks = 4;
    k.compute_alone_s = alone_s;
    k.compute_with_comm_s = with_s;
    k.comm_alone_s = 100e-6;
    k.comm_with_compute_s = 130e-6;
    k.file = "norm4.json";
    return k;
  };
  // Slowdowns 1.1 and 1.1 x 1.21 beside NCCL: geometric mean 1.1 x 1.1 = 1.21. A copy-engine case (2x) is not
  // an NCCL case and is left out.
  in.bench.contention = {norm("all_reduce", 20e-6, 22e-6), norm("all_to_all", 10e-6, 13.31e-6)};
  ContentionCase copy = norm("ce_copy", 10e-6, 20e-6);
  copy.ctas.reset();
  in.bench.contention.push_back(copy);
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  EXPECT_DOUBLE_EQ(p.contention.memory_slowdown_with_comm, 1.21);
  EXPECT_NE(p.contention.source.find("memory_slowdown_with_comm = 1.21"), std::string::npos);
  // Without RMSNorm runs the base's value (1, none) stays.
  in.bench.contention.clear();
  EXPECT_DOUBLE_EQ(calibrate(base_profile(), in).profile.contention.memory_slowdown_with_comm, 1.0);
}

TEST(Calibrator, BlasCallCostFromCallsWithTheirOwnOperandsWhenMeasured) {
  // gemm_bench repeats one GEMM on the same operands: host 7, 8 and 9 us per call, median 8. launch_bench's
  // eager_host_gemm gives each call its own weights, as a layer does: 9.8, 9.0 and 9.4 us over three runs,
  // median 9.4; it is preferred when present.
  CalibrationInputs in = inputs();
  const double host[] = {7e-6, 8e-6, 9e-6};
  for (std::size_t i = 0; i < 3; ++i) in.bench.gemm[i].host_s = host[i];
  EXPECT_DOUBLE_EQ(calibrate(base_profile(), in).profile.gpu.blas_call_overhead_s, 8e-6);
  for (double t : {9.8e-6, 9.0e-6, 9.4e-6}) in.bench.launch.push_back({"eager_host_gemm", t});
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  EXPECT_DOUBLE_EQ(p.gpu.blas_call_overhead_s, 9.4e-6);
  EXPECT_NE(p.gpu.source.find(
                "blas_call_overhead_us = 9.4 us, the median over 3 launch_bench runs of eager_host_gemm"),
            std::string::npos)
      << p.gpu.source;
  EXPECT_NE(p.gpu.source.find("same operands, median of 5): 8 us."), std::string::npos) << p.gpu.source;
}

TEST(Calibrator, AtomicAddRateFromBf16IndexAddCases) {
  // rows x hidden adds over each bf16 case's time: 4,194,304 / 40 us = 104.8576 G/s, 8,388,608 / 64 us =
  // 131.072 G/s and 16,777,216 / 140 us = 119.8373 G/s: median 119.8 (4 significant figures). The fp32
  // case (838.9 G/s; with it the median would be 125.5) is not fitted; without bf16 cases the base's value
  // (none) stays. Against the dense adds: bf16 40/10 = 4, 64/20 = 3.2, 140/28 = 5; fp32 20/12.5 = 1.6.
  // Residual over the 3 bf16 cases, worst at the first: 4,194,304 / 119.8 G/s = 35.01 us against 40.
  CalibrationInputs in = inputs();
  EXPECT_EQ(calibrate(base_profile(), in).profile.gpu.atomic_add_bf16_per_s, 0);
  in.bench.atomic_adds = {{2048, 2048, "bfloat16", 40e-6, 10e-6},
                          {4096, 2048, "bfloat16", 64e-6, 20e-6},
                          {4096, 4096, "bfloat16", 140e-6, 28e-6},
                          {4096, 4096, "float32", 20e-6, 12.5e-6}};
  const CalibrationResult result = calibrate(base_profile(), in);
  const hw::HwProfile& p = result.profile;
  EXPECT_DOUBLE_EQ(p.gpu.atomic_add_bf16_per_s, 119.8e9);
  EXPECT_NE(p.gpu.source.find("atomic_add_bf16_G_per_s = 119.8, the median over 3 bf16 cases"),
            std::string::npos)
      << p.gpu.source;
  EXPECT_NE(
      p.gpu.source.find("(per case 104.9-131.1, 3.2-5x a dense add; the 1 fp32 case is not fitted: fp32 "
                        "atomics are native, 1.6x a dense add)."),
      std::string::npos)
      << p.gpu.source;
  auto residual = std::find_if(result.residuals.begin(), result.residuals.end(),
                               [](const Residual& r) { return r.table == "atomic add"; });
  ASSERT_NE(residual, result.residuals.end());
  EXPECT_EQ(residual->points, 3);
  EXPECT_NEAR(residual->max_rel, 1 - 4194304 / (119.8e9 * 40e-6), 1e-9);
  in.bench.atomic_adds = {{4096, 4096, "float32", 20e-6, 12.5e-6}};
  EXPECT_EQ(calibrate(base_profile(), in).profile.gpu.atomic_add_bf16_per_s, 0);
}

TEST(Calibrator, TileGemmRateFromThePersistentCaseWithTheMostTiles) {
  // bf16 tile tasks (128x64x8, 2 blocks per SM): persistent m = 16384 (4096 tiles) at 50 TF/s is the rate;
  // m = 4096 (1024 tiles on 199 blocks, >= 2 waves) at 45 TF/s enters the residual only; m = 128 (one
  // partial wave) and the per-SM mode neither. value = 50 / (1000 x 0.5 sustained) = 0.1. An fp16 case
  // has no fp16 peak in the base: a note, no value.
  CalibrationInputs in = inputs();
  in.bench.runs.push_back(run("tile.json", "tile_gemm", 1));
  auto tile = [](const std::string& mode, const std::string& dtype, std::int64_t m, double tflops) {
    TileGemmCase k{mode, dtype, m, 2048, 2048, 128, 64, 8, 2, 199, m / 128 * 32, 0};
    k.time_s = 2.0 * static_cast<double>(m) * 2048 * 2048 / (tflops * 1e12);
    return k;
  };
  in.bench.tile_gemm = {tile("persistent", "bf16", 128, 5), tile("persistent", "bf16", 4096, 45),
                        tile("persistent", "bf16", 16384, 50), tile("per_sm", "bf16", 32768, 60),
                        tile("persistent", "fp16", 16384, 50)};
  const CalibrationResult result = calibrate(base_profile(), in);
  const hw::TileGemmSpec& t = result.profile.efficiency.tile_gemm;
  EXPECT_EQ(t.tile_m, 128);
  EXPECT_EQ(t.tile_n, 64);
  EXPECT_EQ(t.tile_k, 8);
  EXPECT_EQ(t.blocks_per_sm, 2);
  ASSERT_EQ(t.value.size(), 1u);
  EXPECT_DOUBLE_EQ(t.value.at("bf16"), 0.1);
  EXPECT_DOUBLE_EQ(*result.profile.tile_gemm_flops("bf16"), 50e12);
  EXPECT_FALSE(result.profile.tile_gemm_flops("fp8").has_value());
  EXPECT_NE(t.source.find("bf16 0.1 (50 TF/s at m = 16384, 4096 tiles on 199 blocks)"), std::string::npos)
      << t.source;
  auto residual = std::find_if(result.residuals.begin(), result.residuals.end(),
                               [](const Residual& r) { return r.table == "tile_gemm"; });
  ASSERT_NE(residual, result.residuals.end());
  EXPECT_EQ(residual->points, 2);
  EXPECT_NEAR(residual->max_rel, 1 - 45.0 / 50, 1e-9);  // m = 4096 modelled at 50 where it ran at 45
  EXPECT_NE(std::find(result.notes.begin(), result.notes.end(),
                      "tile_gemm fp16: the profile has no fp16 peak; not fitted"),
            result.notes.end());
  // The profile text carries the section and loads back with it.
  const hw::HwProfile back =
      hw::profile_from_json(nlohmann::json::parse(profile_text(result.profile)), "back");
  EXPECT_DOUBLE_EQ(back.efficiency.tile_gemm.value.at("bf16"), 0.1);
  EXPECT_EQ(back.efficiency.tile_gemm.blocks_per_sm, 2);
}

TEST(Calibrator, AttentionCurveOverEqualWorkWhenSeveralHeadCountsWereMeasured) {
  // cuDNN forward at 16 sequences x heads, L 1024 and 2048 (efficiency 0.2, 0.4 of the 500 TF/s sustained
  // peak), and at 64, L 1024: equal work to 16 at 1024 x sqrt(64 / 16) = 2048, where it reached 0.4 too.
  // The curve: {1024: 0.2, 2048: 0.4}, batch_heads 16; the base's 4096 point keeps its shape scaled to the
  // measured edge (0.6 x 0.4 / 0.5 = 0.48).
  CalibrationInputs in = inputs();
  in.bench.runs.push_back(run("sdpa.json", "torch_sdpa", 1));
  auto sdpa = [](std::int64_t batch_heads, std::int64_t seq, double efficiency) {
    const double l = static_cast<double>(seq);
    const double flops = 2.0 * static_cast<double>(batch_heads) * (l * l / 2.0) * 256.0;
    return AttentionCase{"torch:cudnn", true, batch_heads, seq, 128, 128, flops / (efficiency * 500e12)};
  };
  in.bench.attention = {sdpa(16, 1024, 0.2), sdpa(16, 2048, 0.4), sdpa(64, 1024, 0.4)};
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  const hw::EfficiencyCurve& curve = p.efficiency.attention_fwd;
  EXPECT_EQ(curve.batch_heads, 16);
  ASSERT_EQ(curve.x, (std::vector<double>{1024, 2048, 4096}));
  EXPECT_EQ(curve.value, (std::vector<double>{0.2, 0.4, 0.48}));
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, hw::AttentionPass::FORWARD, hw::AttentionImpl::FUSED, 64),
                   0.4);
  const hw::HwProfile back = hw::profile_from_json(nlohmann::json::parse(profile_text(p)), "back");
  EXPECT_EQ(back.efficiency.attention_fwd.batch_heads, 16);
  // One head count measured: a curve over L, as before (batch_heads unset).
  in.bench.attention.pop_back();
  EXPECT_EQ(calibrate(base_profile(), in).profile.efficiency.attention_fwd.batch_heads, 0);
}

// Backward cases make attention_bwd over the same equal-work lengths as the forward curve: cuDNN's backward
// at 16 sequences x heads, 2.5 x the forward FLOPs, reached 0.1 at L 1024 and 0.3 at 2048 where the forward
// reached 0.2 and 0.4 (its backward / forward time 5.0 and 3.3: one factor could not hold both).
TEST(Calibrator, BackwardCasesMakeABackwardCurve) {
  CalibrationInputs in = inputs();
  in.bench.runs.push_back(run("sdpa.json", "torch_sdpa", 1));
  auto sdpa = [](bool forward, std::int64_t batch_heads, std::int64_t seq, double efficiency) {
    const double l = static_cast<double>(seq);
    const double flops =
        (forward ? 1.0 : 2.5) * 2.0 * static_cast<double>(batch_heads) * (l * l / 2.0) * 256.0;
    return AttentionCase{"torch:cudnn", forward, batch_heads, seq, 128, 128, flops / (efficiency * 500e12)};
  };
  in.bench.attention = {sdpa(true, 16, 1024, 0.2), sdpa(true, 16, 2048, 0.4), sdpa(true, 64, 1024, 0.4),
                        sdpa(false, 16, 1024, 0.1), sdpa(false, 16, 2048, 0.3)};
  const hw::HwProfile p = calibrate(base_profile(), in).profile;
  const hw::EfficiencyCurve& curve = p.efficiency.attention_bwd;
  EXPECT_EQ(curve.batch_heads, 16);
  ASSERT_GE(curve.x.size(), 2u);
  EXPECT_DOUBLE_EQ(curve.x[0], 1024);
  EXPECT_DOUBLE_EQ(curve.value[0], 0.1);
  EXPECT_DOUBLE_EQ(curve.x[1], 2048);
  EXPECT_DOUBLE_EQ(curve.value[1], 0.3);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(1024, hw::AttentionPass::BACKWARD), 0.1);
  EXPECT_DOUBLE_EQ(p.attention_efficiency(2048, hw::AttentionPass::BACKWARD), 0.3);
  // The factor stays, for unfused attention: geometric mean of 0.1 / 0.2 and 0.3 / 0.4.
  EXPECT_DOUBLE_EQ(p.efficiency.attention_bwd_factor, 0.6124);
  const hw::HwProfile back = hw::profile_from_json(nlohmann::json::parse(profile_text(p)), "back");
  EXPECT_EQ(back.efficiency.attention_bwd.value, curve.value);
}

// The shipped H200 profile's fused backward follows the committed SDPA measurement
// (data/calibration/2026-11-27-nvidia-h200-sdpa-held, cuDNN, 16 heads, d 128/128): backward / forward time
// 4.02 at L 1024 and 3.01 at 8192, where one factor gives the same ratio at both.
TEST(Calibrator, ShippedH200BackwardOverForwardFallsWithLength) {
  const hw::HwProfile p = hw::load_profile("h200");
  const auto ratio = [&](std::int64_t seq) {
    return 2.5 * p.attention_efficiency(seq, hw::AttentionPass::FORWARD, hw::AttentionImpl::FUSED, 16) /
           p.attention_efficiency(seq, hw::AttentionPass::BACKWARD, hw::AttentionImpl::FUSED, 16);
  };
  EXPECT_GT(ratio(1024), 1.2 * ratio(8192));
  EXPECT_NEAR(ratio(8192), 3.01, 0.5);
  EXPECT_NEAR(ratio(1024), 4.02, 0.8);
}

TEST(Calibrator, SameInputsSameText) {
  EXPECT_EQ(profile_text(calibrate(base_profile(), inputs()).profile),
            profile_text(calibrate(base_profile(), inputs()).profile));
  // The text loads back as a valid profile with the same numbers.
  const std::string text = profile_text(calibrate(base_profile(), inputs()).profile);
  const hw::HwProfile back = hw::profile_from_json(nlohmann::json::parse(text), "back.json");
  EXPECT_EQ(back.contention.comm_sms, 20);
  EXPECT_EQ(back.efficiency.gemm.value, (std::vector<std::vector<double>>{{0.1, 0.2}, {0.5, 0.8}}));
}

TEST(Calibrator, NcclTestsLogAddsAnEightGpuTable) {
  CalibrationInputs in;
  in.nccl_tests.push_back(load_nccl_tests_log(kData + "/all_reduce_perf_8xh100.log"));
  const CalibrationResult r = calibrate(base_profile(), in);
  const hw::CollectiveTable& t =
      r.profile.collective_table(hw::CollectiveKind::ALL_REDUCE, 8, hw::CollectiveScope::INTRA);
  EXPECT_EQ(t.gpus, 8);
  EXPECT_DOUBLE_EQ(t.step_latency_s, 1e-6);
  // 114.688 / 200.0009 / 349.9836 / 359.9985 GB/s (NcclTestsLog_test), 4 digits; the port cap 360 GB/s is not
  // hit.
  EXPECT_EQ(t.busbw_Bps, (std::vector<double>{114.7e9, 200.0e9, 350.0e9, 360.0e9}));
  EXPECT_EQ(r.profile.provenance.libraries, "nccl-tests 2.13.10, NCCL 2.21.5");
  EXPECT_EQ(r.profile.provenance.device, "8x NVIDIA H100 80GB HBM3");
}

// power_bench results fit the power section; GEMM cases NVML saw below the maximum clock (1200 MHz here) are
// scaled to it by (max / clock)^clock_rate_exponent before they fill the table; cases without NVML stay.
TEST(Calibrator, PowerSectionAndGemmRatesAtTheMaximumClock) {
  testing::PowerTruth truth;
  truth.max_clock_hz = 1200e6;  // the base profile's max_boost_clock_mhz; bf16 peak 1000 TF/s as the truth's
  CalibrationInputs in;
  in.bench.runs = {run("gemm.json", "gemm", 1), run("power.json", "power", 1)};
  in.bench.power = {testing::synthetic_power_run(truth, "power.json")};
  const double bf16 = 500e12;  // sustained: 1000 TF/s x 0.5
  NvmlReading at_600;
  at_600.sm_clock_hz = 600e6;
  at_600.samples = 3;
  at_600.clock_reasons = "sw_power_cap";
  NvmlReading at_max = at_600;
  at_max.sm_clock_hz = 1200e6;
  // (256, 4096) measured at 0.4 of the sustained peak at 600 MHz: 0.4 x 2^0.6 = 0.6063 at 1200 MHz.
  in.bench.gemm = {{"a", 16, 1024, 1024, "bf16", gemm_time(16, 1024, 1024, 0.1, bf16), 0, std::nullopt},
                   {"b", 16, 4096, 8192, "bf16", gemm_time(16, 4096, 8192, 0.2, bf16), 0, at_max},
                   {"c", 256, 8192, 1024, "bf16", gemm_time(256, 8192, 1024, 0.5, bf16), 0, std::nullopt},
                   {"d", 256, 4096, 4096, "bf16", gemm_time(256, 4096, 4096, 0.4, bf16), 0, at_600}};
  const CalibrationResult r = calibrate(base_profile(), in);
  const hw::HwProfile& p = r.profile;
  ASSERT_TRUE(p.power.present);
  EXPECT_DOUBLE_EQ(p.power.clock_rate_exponent, 0.6);
  EXPECT_DOUBLE_EQ(p.power.speed_exponent, 2.5);
  EXPECT_DOUBLE_EQ(p.power.compute_w_at_peak, 1000);
  EXPECT_DOUBLE_EQ(p.power.idle_w, 100);
  EXPECT_DOUBLE_EQ(p.power.limit_w, 700);
  EXPECT_DOUBLE_EQ(p.power.hbm_j_per_byte, 1e-10);
  EXPECT_EQ(p.power.link_j_per_byte, 0);
  EXPECT_EQ(p.efficiency.gemm.value, (std::vector<std::vector<double>>{{0.1, 0.2}, {0.5, 0.6063}}));
  EXPECT_DOUBLE_EQ(p.gpu.sustained_clock_factor, 0.5);  // unchanged
  EXPECT_NE(p.efficiency.gemm.source.find("1 gemm cases ran below it, mean factor 1.516"), std::string::npos)
      << p.efficiency.gemm.source;
  bool noted = false;
  for (const std::string& note : r.notes) {
    if (note.rfind("clocks: 1 GEMM/grouped GEMM/attention cases ran below the maximum clock 1200 MHz", 0) ==
        0) {
      noted = true;
      EXPECT_NE(note.find("mean factor 1.516; 1 ran at it; 2 carry no NVML clock"), std::string::npos)
          << note;
    }
  }
  EXPECT_TRUE(noted);
  EXPECT_EQ(r.residuals.front().table, "power");
  EXPECT_LT(r.residuals.front().max_rel, 1e-3);
  // The section is written and reads back.
  const hw::HwProfile back = hw::profile_from_json(nlohmann::json::parse(profile_text(p)), "back.json");
  EXPECT_DOUBLE_EQ(back.power.hbm_j_per_byte, 1e-10);

  // Without power_bench results (and a base without a power section) the rates are used as measured.
  CalibrationInputs no_power = in;
  no_power.bench.power.clear();
  no_power.bench.runs.pop_back();
  const CalibrationResult plain = calibrate(base_profile(), no_power);
  EXPECT_FALSE(plain.profile.power.present);
  EXPECT_EQ(plain.profile.efficiency.gemm.value, (std::vector<std::vector<double>>{{0.1, 0.2}, {0.5, 0.4}}));
  EXPECT_EQ(profile_text(plain.profile).find("\"power\""), std::string::npos);
}

TEST(Calibrator, RefusesAnotherGpuAndEmptyInputs) {
  CalibrationInputs in = inputs();
  in.bench.runs[0].sm_count = 132;
  in.bench.runs[0].gpu_name = "NVIDIA H200";
  try {
    calibrate(base_profile(), in);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "gemm.json: /gpus/0/multiprocessors = 132: measured on NVIDIA H200, but the base profile 'testgpu' "
        "describes TestGPU with 100 SMs");
  }
  EXPECT_THROW(calibrate(base_profile(), CalibrationInputs{}), ConfigError);
}

}  // namespace
}  // namespace moesim::calibrate
