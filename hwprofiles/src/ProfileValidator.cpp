// validate(): every rule of hwprofiles/FORMAT.md, reported with the JSON pointer of the offending
// key and the value converted back to the unit its key names.
#include <cmath>

#include "ProfileUnits.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/NumberText.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::hw {
namespace {

using units::kGBps;
using units::kMHz;
using units::kMiB;
using units::kNs;
using units::kOne;
using units::kUs;

// Physical bounds (docs/limits.md): generous around every GPU, fabric and NIC that exists (shipped profiles
// span 80-304 SMs, 1410-2400 MHz, 600-8000 GB/s), and tight enough that a profile the validator accepts
// gives every op a finite, positive duration the engine can run.
constexpr double kMaxCount = 65536;  // SMs, experts of a router point
constexpr double kMinClockMhz = 100;
constexpr double kMaxClockMhz = 10000;
constexpr double kMinTflops = 1e-3;
constexpr double kMaxTflops = 1e5;
constexpr double kMinMemoryGB = 1e-3;
constexpr double kMaxMemoryGB = 1e5;
constexpr double kMinBandwidthGBps = 1e-3;  // memory, links, NICs and collectives' bus bandwidth
constexpr double kMaxBandwidthGBps = 1e6;
constexpr double kMinCacheMiB = 1e-3;
constexpr double kMaxCacheMiB = 1e6;
constexpr double kMaxOverheadUs = 1e4;      // launches, library calls, the shortest kernel: 10 ms
constexpr double kMaxAtomicAddGPerS = 1e4;  // atomic adds: 10 T elements/s, far above any GPU's HBM
constexpr double kMaxLatencyUs = 1e6;       // fabric, network and collective step latency: 1 s
constexpr double kMaxGpusPerNode = 1024;
constexpr double kMinFraction = 1e-4;  // efficiencies and clock factors
constexpr double kMaxSlowdown = 100;   // contention factors and HBM bytes per byte moved
constexpr double kMaxWatts = 1e5;
constexpr double kMaxPjPerByte = 1e6;
constexpr double kMaxSpeedExponent = 10;
constexpr double kMaxAxis = 1e15;  // table axes: sizes, sequence lengths, token counts, times

/** Throws ConfigError("file: /pointer = value: rule"); `unit` turns the SI value back into file units. */
class RuleChecker {
 public:
  explicit RuleChecker(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw ConfigError(file_, pointer, message);
  }
  [[noreturn]] void fail_value(const std::string& pointer, double shown, const std::string& rule) const {
    fail(pointer, "= " + format_number(shown) + ": " + rule);
  }
  void positive(const std::string& pointer, double value, double unit = kOne) const {
    if (!(value > 0)) fail_value(pointer, value / unit, "must be > 0");
  }
  void non_negative(const std::string& pointer, double value, double unit = kOne) const {
    if (!(value >= 0)) fail_value(pointer, value / unit, "must be >= 0");
  }
  /** An efficiency or a factor: in (0, 1], and not below kMinFraction (smaller is no measurement). */
  void fraction(const std::string& pointer, double value) const {
    if (!(value > 0 && value <= 1)) fail_value(pointer, value, "must be in (0, 1]");
    if (value < kMinFraction) fail_value(pointer, value, "must be >= " + format_number(kMinFraction));
  }
  /** A slowdown factor: >= 1, and not past kMaxSlowdown. */
  void at_least_one(const std::string& pointer, double value) const {
    if (!(value >= 1)) fail_value(pointer, value, "must be >= 1");
    within(pointer, value, kOne, 1, kMaxSlowdown);
  }
  /** A physical bound in file units: [low, high] (docs/limits.md), after the sign rules above. */
  void within(const std::string& pointer, double value, double unit, double low, double high) const {
    if (!(value / unit >= low && value / unit <= high)) {
      fail_value(pointer, value / unit,
                 "must be in [" + format_number(low) + ", " + format_number(high) +
                     "] (physical bound, docs/limits.md)");
    }
  }
  void not_empty(const std::string& pointer, const std::string& text) const {
    if (text.empty()) fail(pointer, "= \"\": must not be empty");
  }
  /** A table axis: non-empty, positive, strictly increasing; element i lives at element_pointer(i). */
  template <typename PointerOf>
  void axis(const std::string& pointer, const std::vector<double>& values, double unit,
            PointerOf element_pointer) const {
    if (values.empty()) fail(pointer, "must not be empty");
    for (std::size_t i = 0; i < values.size(); ++i) {
      positive(element_pointer(i), values[i], unit);
      within(element_pointer(i), values[i], unit, 0, kMaxAxis);
      if (i > 0 && !(values[i] > values[i - 1])) {
        fail_value(element_pointer(i), values[i] / unit,
                   "must be > the previous entry (" + format_number(values[i - 1] / unit) + ")");
      }
    }
  }
  void axis(const std::string& pointer, const std::vector<double>& values, double unit = kOne) const {
    axis(pointer, values, unit, [&](std::size_t i) { return pointer + "/" + std::to_string(i); });
  }
  void same_count(const std::string& pointer, std::size_t count, std::size_t expected,
                  const std::string& what) const {
    if (count != expected) {
      fail(pointer, "has " + std::to_string(count) + " entries: must have one per " + what + " entry (" +
                        std::to_string(expected) + ")");
    }
  }

 private:
  const std::string& file_;
};

void validate_header(const HwProfile& p, const RuleChecker& check) {
  if (p.schema_version != 1) check.fail_value("/schema_version", p.schema_version, "must be 1");
  check.not_empty("/name", p.name);
  const Provenance& prov = p.provenance;
  if (prov.sources.empty()) check.fail("/provenance/sources", "must list at least one source");
  if (prov.kind != ProvenanceKind::CALIBRATED) return;
  const std::pair<const char*, const std::string*> required[] = {{"date", &prov.date},
                                                                 {"device", &prov.device},
                                                                 {"driver", &prov.driver},
                                                                 {"libraries", &prov.libraries}};
  for (const auto& [key, value] : required) {
    if (value->empty())
      check.fail(std::string("/provenance/") + key, "is missing (required when kind is calibrated)");
  }
}

void validate_gpu(const GpuSpec& g, const RuleChecker& check) {
  check.not_empty("/gpu/name", g.name);
  check.positive("/gpu/sm_count", g.sm_count);
  check.within("/gpu/sm_count", g.sm_count, kOne, 1, kMaxCount);
  check.positive("/gpu/peak_clock_mhz", g.peak_clock_hz, kMHz);
  check.within("/gpu/peak_clock_mhz", g.peak_clock_hz, kMHz, kMinClockMhz, kMaxClockMhz);
  check.positive("/gpu/max_boost_clock_mhz", g.max_boost_clock_hz, kMHz);
  check.within("/gpu/max_boost_clock_mhz", g.max_boost_clock_hz, kMHz, kMinClockMhz, kMaxClockMhz);
  if (g.max_boost_clock_hz < g.peak_clock_hz) {
    check.fail_value("/gpu/max_boost_clock_mhz", g.max_boost_clock_hz / kMHz,
                     "must be >= /gpu/peak_clock_mhz (" + format_number(g.peak_clock_hz / kMHz) + ")");
  }
  check.fraction("/gpu/sustained_clock_factor", g.sustained_clock_factor);
  if (g.peak_flops.empty()) check.fail("/gpu/peak_tflops", "must give at least one dtype");
  for (const auto& [dtype, flops] : g.peak_flops) {
    check.positive("/gpu/peak_tflops/" + dtype, flops, units::kTflops);
    check.within("/gpu/peak_tflops/" + dtype, flops, units::kTflops, kMinTflops, kMaxTflops);
  }
  check.positive("/gpu/hbm_GB", g.hbm_bytes, units::kGB);
  check.within("/gpu/hbm_GB", g.hbm_bytes, units::kGB, kMinMemoryGB, kMaxMemoryGB);
  check.positive("/gpu/hbm_bw_GBps", g.hbm_bw_Bps, kGBps);
  check.within("/gpu/hbm_bw_GBps", g.hbm_bw_Bps, kGBps, kMinBandwidthGBps, kMaxBandwidthGBps);
  check.positive("/gpu/l2_MiB", g.l2_bytes, kMiB);
  check.within("/gpu/l2_MiB", g.l2_bytes, kMiB, kMinCacheMiB, kMaxCacheMiB);
  check.non_negative("/gpu/llc_MiB", g.llc_bytes, kMiB);
  check.within("/gpu/llc_MiB", g.llc_bytes, kMiB, 0, kMaxCacheMiB);
  const std::pair<const char*, double> overheads[] = {{"launch_overhead_us", g.launch_overhead_s},
                                                      {"blas_call_overhead_us", g.blas_call_overhead_s},
                                                      {"copy_launch_overhead_us", g.copy_launch_overhead_s},
                                                      {"graph_launch_overhead_us", g.graph_launch_overhead_s},
                                                      {"graph_node_overhead_us", g.graph_node_overhead_s},
                                                      {"kernel_min_us", g.kernel_min_s}};
  for (const auto& [key, seconds] : overheads) {
    check.non_negative(std::string("/gpu/") + key, seconds, kUs);
    check.within(std::string("/gpu/") + key, seconds, kUs, 0, kMaxOverheadUs);
  }
  check.non_negative("/gpu/atomic_add_bf16_G_per_s", g.atomic_add_bf16_per_s, 1e9);
  check.within("/gpu/atomic_add_bf16_G_per_s", g.atomic_add_bf16_per_s, 1e9, 0, kMaxAtomicAddGPerS);
  check.not_empty("/gpu/source", g.source);
}

void validate_curve(const EfficiencyCurve& c, const std::string& pointer, const std::string& axis_key,
                    const RuleChecker& check) {
  check.axis(pointer + "/" + axis_key, c.x);
  check.same_count(pointer + "/value", c.value.size(), c.x.size(), axis_key);
  for (std::size_t i = 0; i < c.value.size(); ++i)
    check.fraction(pointer + "/value/" + std::to_string(i), c.value[i]);
  check.not_empty(pointer + "/source", c.source);
}

void validate_gemm(const GemmEfficiencyTable& t, const RuleChecker& check) {
  const std::string base = "/efficiency/gemm";
  check.axis(base + "/m", t.m);
  check.axis(base + "/min_nk", t.min_nk);
  check.same_count(base + "/value", t.value.size(), t.m.size(), "m");
  for (std::size_t i = 0; i < t.value.size(); ++i) {
    const std::string row = base + "/value/" + std::to_string(i);
    check.same_count(row, t.value[i].size(), t.min_nk.size(), "min_nk");
    for (std::size_t j = 0; j < t.value[i].size(); ++j)
      check.fraction(row + "/" + std::to_string(j), t.value[i][j]);
  }
  check.not_empty(base + "/source", t.source);
}

void validate_gemm_shapes(const GemmShapeCurves& curves, const RuleChecker& check) {
  const std::string base = "/efficiency/gemm_shapes";
  for (std::size_t i = 0; i < curves.shapes.size(); ++i) {
    const GemmShapeCurve& c = curves.shapes[i];
    const std::string entry = base + "/shapes/" + std::to_string(i);
    for (std::size_t j = 0; j < i; ++j) {
      if (curves.shapes[j].n == c.n && curves.shapes[j].k == c.k) {
        check.fail(entry, "repeats n = " + std::to_string(c.n) + ", k = " + std::to_string(c.k) + " of " +
                              base + "/shapes/" + std::to_string(j));
      }
    }
    check.axis(entry + "/m", c.m);
    check.same_count(entry + "/value", c.value.size(), c.m.size(), "m");
    for (std::size_t j = 0; j < c.value.size(); ++j)
      check.fraction(entry + "/value/" + std::to_string(j), c.value[j]);
  }
  check.not_empty(base + "/source", curves.source);
}

void validate_router_topk(const RouterTopkTable& t, const RuleChecker& check) {
  const std::string base = "/efficiency/router_topk/points";
  auto at = [&](std::size_t i) { return base + "/" + std::to_string(i); };
  check.axis(base, t.top_k, kOne, [&](std::size_t i) { return at(i) + "/top_k"; });
  for (std::size_t i = 0; i < t.top_k.size(); ++i) {
    check.positive(at(i) + "/experts", t.experts[i]);
    if (t.experts[i] < t.top_k[i]) {
      check.fail_value(at(i) + "/experts", t.experts[i],
                       "must be >= top_k (" + format_number(t.top_k[i]) + ")");
    }
    check.within(at(i) + "/experts", t.experts[i], kOne, 1, kMaxCount);
    check.non_negative(at(i) + "/fixed_us", t.fixed_s[i], kUs);
    check.within(at(i) + "/fixed_us", t.fixed_s[i], kUs, 0, kMaxOverheadUs);
    check.positive(at(i) + "/ns_per_token", t.s_per_token[i], kNs);
    check.within(at(i) + "/ns_per_token", t.s_per_token[i], kNs, 0, kMaxOverheadUs * 1e3);
    check.at_least_one(at(i) + "/comm_slowdown", t.comm_slowdown[i]);
    check.at_least_one(at(i) + "/comm_drag", t.comm_drag[i]);
  }
  check.not_empty("/efficiency/router_topk/source", t.source);
}

void validate_tile_gemm(const HwProfile& p, const RuleChecker& check) {
  const TileGemmSpec& t = p.efficiency.tile_gemm;
  const std::string base = "/efficiency/tile_gemm";
  if (t.value.empty()) check.fail(base + "/value", "must give at least one dtype");
  for (const auto& [dtype, fraction] : t.value) {
    if (!p.gpu.peak_flops.count(dtype))
      check.fail(base + "/value/" + dtype, "has no matching /gpu/peak_tflops/" + dtype);
    check.fraction(base + "/value/" + dtype, fraction);
  }
  check.not_empty(base + "/source", t.source);
}

void validate_efficiency(const HwProfile& p, const RuleChecker& check) {
  const EfficiencySpec& e = p.efficiency;
  validate_gemm(e.gemm, check);
  if (!e.gemm_shapes.shapes.empty()) validate_gemm_shapes(e.gemm_shapes, check);
  for (const auto& [dtype, factor] : e.gemm_dtype_factor) {
    const std::string pointer = "/efficiency/gemm_dtype_factor/" + dtype;
    if (!p.gpu.peak_flops.count(dtype)) check.fail(pointer, "has no matching /gpu/peak_tflops/" + dtype);
    check.fraction(pointer, factor);
  }
  check.fraction("/efficiency/grouped_gemm_factor", e.grouped_gemm_factor);
  validate_curve(e.attention_fwd, "/efficiency/attention_fwd", "seq", check);
  if (!e.attention_unfused_fwd.x.empty())
    validate_curve(e.attention_unfused_fwd, "/efficiency/attention_unfused_fwd", "seq", check);
  check.fraction("/efficiency/attention_bwd_factor", e.attention_bwd_factor);
  if (!e.attention_bwd.x.empty()) validate_curve(e.attention_bwd, "/efficiency/attention_bwd", "seq", check);
  if (e.attention_rows.overhead_keys != 0 || !e.attention_rows.source.empty()) {
    check.within("/efficiency/attention_rows/overhead_keys", e.attention_rows.overhead_keys, kOne, 0, 65536);
    check.not_empty("/efficiency/attention_rows/source", e.attention_rows.source);
  }
  validate_curve(e.memory, "/efficiency/memory", "bytes", check);
  if (!e.router_topk.top_k.empty()) validate_router_topk(e.router_topk, check);
  if (e.tile_gemm.tile_m > 0) validate_tile_gemm(p, check);
  check.not_empty("/efficiency/source", e.source);
}

void validate_node(const NodeSpec& n, const RuleChecker& check) {
  check.positive("/node/gpus_per_node", n.gpus_per_node);
  check.within("/node/gpus_per_node", n.gpus_per_node, kOne, 1, kMaxGpusPerNode);
  const FabricSpec& f = n.fabric;
  const std::string base = "/node/fabric";
  check.positive(base + "/link_bw_GBps", f.link_bw_Bps, kGBps);
  check.within(base + "/link_bw_GBps", f.link_bw_Bps, kGBps, kMinBandwidthGBps, kMaxBandwidthGBps);
  check.positive(base + "/usable_link_bw_GBps", f.usable_link_bw_Bps, kGBps);
  check.within(base + "/usable_link_bw_GBps", f.usable_link_bw_Bps, kGBps, kMinBandwidthGBps,
               kMaxBandwidthGBps);
  if (f.usable_link_bw_Bps > f.link_bw_Bps) {
    check.fail_value(base + "/usable_link_bw_GBps", f.usable_link_bw_Bps / kGBps,
                     "must be <= link_bw_GBps (" + format_number(f.link_bw_Bps / kGBps) + ")");
  }
  check.positive(base + "/links_per_gpu", f.links_per_gpu);
  check.within(base + "/links_per_gpu", f.links_per_gpu, kOne, 1, kMaxGpusPerNode);
  check.positive(base + "/per_gpu_bw_GBps", f.per_gpu_bw_Bps, kGBps);
  double expected = f.link_bw_Bps * f.links_per_gpu;
  // 0.5% slack: datasheet per-GPU figures are rounded (e.g. 7 * 76.8 = 537.6).
  if (std::abs(f.per_gpu_bw_Bps - expected) > 0.005 * expected) {
    check.fail_value(base + "/per_gpu_bw_GBps", f.per_gpu_bw_Bps / kGBps,
                     "must equal link_bw_GBps * links_per_gpu (" + format_number(expected / kGBps) + ")");
  }
  if (f.type == FabricType::MESH && f.links_per_gpu != n.gpus_per_node - 1) {
    check.fail_value(
        base + "/links_per_gpu", f.links_per_gpu,
        "a full mesh needs gpus_per_node - 1 (" + std::to_string(n.gpus_per_node - 1) + ") links");
  }
  check.non_negative(base + "/latency_us", f.latency_s, kUs);
  check.within(base + "/latency_us", f.latency_s, kUs, 0, kMaxLatencyUs);
  check.not_empty(base + "/source", f.source);
}

void validate_network(const NetworkSpec& n, const RuleChecker& check) {
  check.positive("/network/nics_per_node", n.nics_per_node);
  check.within("/network/nics_per_node", n.nics_per_node, kOne, 1, kMaxGpusPerNode);
  check.positive("/network/nic_gbps", n.nic_bw_Bps, units::kGbps);
  check.within("/network/nic_gbps", n.nic_bw_Bps, units::kGbps, 8 * kMinBandwidthGBps, 8 * kMaxBandwidthGBps);
  check.positive("/network/nic_usable_GBps", n.nic_usable_bw_Bps, kGBps);
  check.within("/network/nic_usable_GBps", n.nic_usable_bw_Bps, kGBps, kMinBandwidthGBps, kMaxBandwidthGBps);
  if (n.nic_usable_bw_Bps > n.nic_bw_Bps) {
    check.fail_value("/network/nic_usable_GBps", n.nic_usable_bw_Bps / kGBps,
                     "must be <= nic_gbps / 8 (" + format_number(n.nic_bw_Bps / kGBps) + ")");
  }
  check.non_negative("/network/latency_us", n.latency_s, kUs);
  check.within("/network/latency_us", n.latency_s, kUs, 0, kMaxLatencyUs);
  check.not_empty("/network/source", n.source);
}

void validate_group_size(const HwProfile& p, const CollectiveTable& t, const std::string& pointer,
                         const RuleChecker& check) {
  int per_node = p.node.gpus_per_node;
  if (t.gpus < 2) check.fail_value(pointer, t.gpus, "must be >= 2");
  if (t.scope == CollectiveScope::INTRA && t.gpus > per_node) {
    check.fail_value(pointer, t.gpus,
                     "must be <= /node/gpus_per_node (" + std::to_string(per_node) + ") for scope intra");
  }
  if (t.scope == CollectiveScope::INTER && t.gpus <= per_node) {
    check.fail_value(pointer, t.gpus,
                     "must be > /node/gpus_per_node (" + std::to_string(per_node) + ") for scope inter");
  }
}

void validate_collective(const HwProfile& p, std::size_t index, const RuleChecker& check) {
  const CollectiveTable& t = p.collectives[index];
  const std::string base = "/collectives/" + std::to_string(index);
  validate_group_size(p, t, base + "/gpus", check);
  check.non_negative(base + "/step_latency_us", t.step_latency_s, kUs);
  check.within(base + "/step_latency_us", t.step_latency_s, kUs, 0, kMaxLatencyUs);
  auto point = [&](std::size_t j, const char* key) {
    return base + "/busbw/" + std::to_string(j) + "/" + key;
  };
  check.axis(base + "/busbw", t.bytes, kOne, [&](std::size_t j) { return point(j, "bytes"); });
  for (std::size_t j = 0; j < t.busbw_Bps.size(); ++j) {
    check.positive(point(j, "GBps"), t.busbw_Bps[j], kGBps);
    check.within(point(j, "GBps"), t.busbw_Bps[j], kGBps, kMinBandwidthGBps, kMaxBandwidthGBps);
  }
  check.not_empty(base + "/source", t.source);
  for (std::size_t other = 0; other < index; ++other) {
    const CollectiveTable& o = p.collectives[other];
    const bool same_transport = (o.algorithm == CollectiveAlgorithm::COPY_ENGINE) ==
                                (t.algorithm == CollectiveAlgorithm::COPY_ENGINE);
    if (o.kind == t.kind && o.scope == t.scope && o.gpus == t.gpus && same_transport) {
      check.fail(base, "duplicates /collectives/" + std::to_string(other) + " (" + to_string(t.kind) + ", " +
                           to_string(t.scope) + ", " + std::to_string(t.gpus) + " GPUs)");
    }
  }
}

void validate_contention(const HwProfile& p, const RuleChecker& check) {
  const ContentionSpec& c = p.contention;
  // A communication kernel needs at least one SM to move data (0 would stall every collective).
  if (c.comm_sms < 1) check.fail_value("/contention/comm_sms", c.comm_sms, "must be >= 1");
  if (c.comm_sms >= p.gpu.sm_count) {
    check.fail_value("/contention/comm_sms", c.comm_sms,
                     "must be < /gpu/sm_count (" + std::to_string(p.gpu.sm_count) + ")");
  }
  check.at_least_one("/contention/compute_slowdown_with_comm", c.compute_slowdown_with_comm);
  if (!c.gemm_kernel_s.empty()) {
    const std::string table = "/contention/gemm_slowdown_with_comm";
    auto at = [&](std::size_t i) { return table + "/" + std::to_string(i); };
    check.axis(table, c.gemm_kernel_s, kUs, [&](std::size_t i) { return at(i) + "/kernel_us"; });
    for (std::size_t i = 0; i < c.gemm_slowdown.size(); ++i)
      check.at_least_one(at(i) + "/slowdown", c.gemm_slowdown[i]);
  }
  check.at_least_one("/contention/comm_slowdown_with_compute", c.comm_slowdown_with_compute);
  check.non_negative("/contention/hbm_bytes_per_comm_byte", c.hbm_bytes_per_comm_byte);
  check.within("/contention/hbm_bytes_per_comm_byte", c.hbm_bytes_per_comm_byte, kOne, 0, kMaxSlowdown);
  check.non_negative("/contention/hbm_bytes_per_copy_byte", c.hbm_bytes_per_copy_byte);
  check.within("/contention/hbm_bytes_per_copy_byte", c.hbm_bytes_per_copy_byte, kOne, 0, kMaxSlowdown);
  check.positive("/contention/comm_hbm_weight", c.comm_hbm_weight);
  check.within("/contention/comm_hbm_weight", c.comm_hbm_weight, kOne, kMinFraction, kMaxSlowdown);
  check.at_least_one("/contention/compute_slowdown_with_copy", c.compute_slowdown_with_copy);
  check.at_least_one("/contention/memory_slowdown_with_comm", c.memory_slowdown_with_comm);
  check.not_empty("/contention/source", c.source);
}

void validate_power(const PowerSpec& w, const RuleChecker& check) {
  if (!w.present) return;
  check.positive("/power/idle_w", w.idle_w);
  check.within("/power/limit_w", w.limit_w, kOne, 0, kMaxWatts);
  if (!(w.limit_w > w.idle_w)) {
    check.fail_value("/power/limit_w", w.limit_w,
                     "must be > /power/idle_w (" + format_number(w.idle_w) + ")");
  }
  check.positive("/power/compute_w_at_peak", w.compute_w_at_peak);
  check.within("/power/compute_w_at_peak", w.compute_w_at_peak, kOne, 0, kMaxWatts);
  check.non_negative("/power/hbm_pj_per_byte", w.hbm_j_per_byte, units::kPjPerByte);
  check.within("/power/hbm_pj_per_byte", w.hbm_j_per_byte, units::kPjPerByte, 0, kMaxPjPerByte);
  check.non_negative("/power/link_pj_per_byte", w.link_j_per_byte, units::kPjPerByte);
  check.within("/power/link_pj_per_byte", w.link_j_per_byte, units::kPjPerByte, 0, kMaxPjPerByte);
  if (!(w.speed_exponent > 1)) check.fail_value("/power/speed_exponent", w.speed_exponent, "must be > 1");
  check.within("/power/speed_exponent", w.speed_exponent, kOne, 1, kMaxSpeedExponent);
  if (!(w.clock_rate_exponent > 0 && w.clock_rate_exponent <= 1.5))
    check.fail_value("/power/clock_rate_exponent", w.clock_rate_exponent, "must be in (0, 1.5]");
  check.not_empty("/power/source", w.source);
}

}  // namespace

void validate(const HwProfile& profile) {
  RuleChecker check(profile.source_file);
  validate_header(profile, check);
  validate_gpu(profile.gpu, check);
  validate_efficiency(profile, check);
  validate_node(profile.node, check);
  validate_network(profile.network, check);
  for (std::size_t i = 0; i < profile.collectives.size(); ++i) validate_collective(profile, i, check);
  validate_contention(profile, check);
  validate_power(profile.power, check);
}

}  // namespace moesim::hw
