#include "moesim/hwprofiles/ProfileWriter.hpp"

#include <string>

#include "ProfileUnits.hpp"

namespace moesim::hw {
namespace {

using nlohmann::ordered_json;
using units::kGB;
using units::kGbps;
using units::kGBps;
using units::kMHz;
using units::kMiB;
using units::kNs;
using units::kPjPerByte;
using units::kTflops;
using units::kUs;

// SI value → file units, without the last-bit noise of the unit conversion.
double in_unit(double si_value, double unit) {
  return std::stod(units::format_number(si_value / unit));
}

std::vector<double> in_unit(const std::vector<double>& si_values, double unit) {
  std::vector<double> out;
  out.reserve(si_values.size());
  for (double v : si_values) out.push_back(in_unit(v, unit));
  return out;
}

ordered_json dtype_object(const std::map<std::string, double>& by_dtype, double unit) {
  ordered_json out = ordered_json::object();
  for (const auto& dtype : known_dtypes()) {
    auto it = by_dtype.find(dtype);
    if (it != by_dtype.end()) out[dtype] = in_unit(it->second, unit);
  }
  return out;
}

ordered_json provenance_json(const Provenance& p) {
  ordered_json out{{"kind", to_string(p.kind)}, {"sources", p.sources}};
  const std::pair<const char*, const std::string*> optional[] = {
      {"date", &p.date}, {"device", &p.device}, {"driver", &p.driver}, {"libraries", &p.libraries}};
  for (const auto& [key, value] : optional) {
    if (!value->empty()) out[key] = *value;
  }
  return out;
}

/** `object` with `key: value` inserted right after `after`, where a reader of the file looks for it. */
ordered_json insert_after(const ordered_json& object, const std::string& after, const std::string& key,
                          ordered_json value) {
  ordered_json out;
  for (const auto& [k, v] : object.items()) {
    out[k] = v;
    if (k == after) out[key] = value;
  }
  return out;
}

ordered_json gpu_json(const GpuSpec& g) {
  ordered_json out = {{"name", g.name},
                      {"sm_count", g.sm_count},
                      {"peak_clock_mhz", in_unit(g.peak_clock_hz, kMHz)},
                      {"max_boost_clock_mhz", in_unit(g.max_boost_clock_hz, kMHz)},
                      {"sustained_clock_factor", g.sustained_clock_factor},
                      {"peak_tflops", dtype_object(g.peak_flops, kTflops)},
                      {"hbm_GB", in_unit(g.hbm_bytes, kGB)},
                      {"hbm_bw_GBps", in_unit(g.hbm_bw_Bps, kGBps)},
                      {"l2_MiB", in_unit(g.l2_bytes, kMiB)},
                      {"llc_MiB", in_unit(g.llc_bytes, kMiB)},
                      {"launch_overhead_us", in_unit(g.launch_overhead_s, kUs)},
                      {"graph_launch_overhead_us", in_unit(g.graph_launch_overhead_s, kUs)},
                      {"graph_node_overhead_us", in_unit(g.graph_node_overhead_s, kUs)},
                      {"kernel_min_us", in_unit(g.kernel_min_s, kUs)},
                      {"source", g.source}};
  if (g.atomic_add_bf16_per_s > 0)
    out = insert_after(out, "kernel_min_us", "atomic_add_bf16_G_per_s", g.atomic_add_bf16_per_s / 1e9);
  // Optional keys, each inserted right after launch_overhead_us: the last inserted comes first.
  if (g.copy_launch_overhead_s > 0)
    out = insert_after(out, "launch_overhead_us", "copy_launch_overhead_us",
                       in_unit(g.copy_launch_overhead_s, kUs));
  if (g.blas_call_overhead_s > 0)
    out = insert_after(out, "launch_overhead_us", "blas_call_overhead_us",
                       in_unit(g.blas_call_overhead_s, kUs));
  return out;
}

ordered_json attention_curve(const EfficiencyCurve& c) {
  ordered_json out = {{"seq", c.x}, {"value", c.value}};
  if (c.batch_heads > 0) out["batch_heads"] = c.batch_heads;
  out["source"] = c.source;
  return out;
}

ordered_json efficiency_json(const EfficiencySpec& e) {
  ordered_json out = {
      {"gemm",
       {{"m", e.gemm.m}, {"min_nk", e.gemm.min_nk}, {"value", e.gemm.value}, {"source", e.gemm.source}}},
      {"gemm_dtype_factor", dtype_object(e.gemm_dtype_factor, 1.0)},
      {"grouped_gemm_factor", e.grouped_gemm_factor},
      {"attention_fwd", attention_curve(e.attention_fwd)},
      {"attention_bwd_factor", e.attention_bwd_factor},
      {"memory", {{"bytes", e.memory.x}, {"value", e.memory.value}, {"source", e.memory.source}}},
      {"source", e.source}};
  if (!e.gemm_shapes.shapes.empty()) {
    ordered_json shapes = ordered_json::array();
    for (const GemmShapeCurve& c : e.gemm_shapes.shapes)
      shapes.push_back({{"n", c.n}, {"k", c.k}, {"m", c.m}, {"value", c.value}});
    out = insert_after(out, "gemm", "gemm_shapes", {{"shapes", shapes}, {"source", e.gemm_shapes.source}});
  }
  if (!e.router_topk.top_k.empty()) {
    const RouterTopkTable& t = e.router_topk;
    ordered_json points = ordered_json::array();
    for (std::size_t i = 0; i < t.top_k.size(); ++i) {
      points.push_back({{"top_k", t.top_k[i]},
                        {"experts", t.experts[i]},
                        {"fixed_us", in_unit(t.fixed_s[i], kUs)},
                        {"ns_per_token", in_unit(t.s_per_token[i], kNs)},
                        {"comm_slowdown", t.comm_slowdown[i]},
                        {"comm_drag", t.comm_drag[i]}});
    }
    out = insert_after(out, "memory", "router_topk", {{"points", points}, {"source", t.source}});
  }
  if (e.tile_gemm.tile_m > 0) {
    const TileGemmSpec& t = e.tile_gemm;
    out = insert_after(out, "grouped_gemm_factor", "tile_gemm",
                       {{"tile", {{"m", t.tile_m}, {"n", t.tile_n}, {"k", t.tile_k}}},
                        {"blocks_per_sm", t.blocks_per_sm},
                        {"value", dtype_object(t.value, 1.0)},
                        {"source", t.source}});
  }
  if (!e.attention_bwd.x.empty())
    out = insert_after(out, "attention_bwd_factor", "attention_bwd", attention_curve(e.attention_bwd));
  if (!e.attention_rows.source.empty())
    out = insert_after(
        out, "attention_bwd_factor", "attention_rows",
        {{"overhead_keys", e.attention_rows.overhead_keys}, {"source", e.attention_rows.source}});
  if (e.attention_unfused_fwd.x.empty()) return out;
  const EfficiencyCurve& unfused = e.attention_unfused_fwd;
  return insert_after(out, "attention_fwd", "attention_unfused_fwd",
                      {{"seq", unfused.x}, {"value", unfused.value}, {"source", unfused.source}});
}

ordered_json node_json(const NodeSpec& n) {
  const FabricSpec& f = n.fabric;
  return {{"gpus_per_node", n.gpus_per_node},
          {"fabric",
           {{"type", to_string(f.type)},
            {"link_bw_GBps", in_unit(f.link_bw_Bps, kGBps)},
            {"usable_link_bw_GBps", in_unit(f.usable_link_bw_Bps, kGBps)},
            {"links_per_gpu", f.links_per_gpu},
            {"per_gpu_bw_GBps", in_unit(f.per_gpu_bw_Bps, kGBps)},
            {"latency_us", in_unit(f.latency_s, kUs)},
            {"source", f.source}}}};
}

ordered_json network_json(const NetworkSpec& n) {
  return {{"nics_per_node", n.nics_per_node},
          {"nic_gbps", in_unit(n.nic_bw_Bps, kGbps)},
          {"nic_usable_GBps", in_unit(n.nic_usable_bw_Bps, kGBps)},
          {"latency_us", in_unit(n.latency_s, kUs)},
          {"source", n.source}};
}

ordered_json collective_json(const CollectiveTable& t) {
  ordered_json points = ordered_json::array();
  std::vector<double> rates = in_unit(t.busbw_Bps, kGBps);
  for (std::size_t i = 0; i < t.bytes.size() && i < rates.size(); ++i) {
    points.push_back({{"bytes", t.bytes[i]}, {"GBps", rates[i]}});
  }
  return {{"kind", to_string(t.kind)},
          {"scope", to_string(t.scope)},
          {"gpus", t.gpus},
          {"algorithm", to_string(t.algorithm)},
          {"step_latency_us", in_unit(t.step_latency_s, kUs)},
          {"busbw", points},
          {"source", t.source}};
}

ordered_json contention_json(const ContentionSpec& c) {
  ordered_json out = {{"comm_sms", c.comm_sms},
                      {"compute_slowdown_with_comm", c.compute_slowdown_with_comm},
                      {"comm_slowdown_with_compute", c.comm_slowdown_with_compute},
                      {"hbm_bytes_per_comm_byte", c.hbm_bytes_per_comm_byte},
                      {"hbm_bytes_per_copy_byte", c.hbm_bytes_per_copy_byte},
                      {"comm_hbm_weight", c.comm_hbm_weight},
                      {"source", c.source}};
  if (!c.gemm_kernel_s.empty()) {
    ordered_json points = ordered_json::array();
    for (std::size_t i = 0; i < c.gemm_kernel_s.size(); ++i)
      points.push_back({{"kernel_us", in_unit(c.gemm_kernel_s[i], kUs)}, {"slowdown", c.gemm_slowdown[i]}});
    out = insert_after(out, "compute_slowdown_with_comm", "gemm_slowdown_with_comm", points);
  }
  if (c.memory_slowdown_with_comm != 1.0) {
    const char* after = c.gemm_kernel_s.empty() ? "compute_slowdown_with_comm" : "gemm_slowdown_with_comm";
    out = insert_after(out, after, "memory_slowdown_with_comm", c.memory_slowdown_with_comm);
  }
  if (c.compute_slowdown_with_copy == 1.0) return out;
  return insert_after(out, "comm_slowdown_with_compute", "compute_slowdown_with_copy",
                      c.compute_slowdown_with_copy);
}

ordered_json power_json(const PowerSpec& w) {
  return {{"limit_w", w.limit_w},
          {"idle_w", w.idle_w},
          {"compute_w_at_peak", w.compute_w_at_peak},
          {"hbm_pj_per_byte", in_unit(w.hbm_j_per_byte, kPjPerByte)},
          {"link_pj_per_byte", in_unit(w.link_j_per_byte, kPjPerByte)},
          {"speed_exponent", w.speed_exponent},
          {"clock_rate_exponent", w.clock_rate_exponent},
          {"source", w.source}};
}

}  // namespace

ordered_json profile_to_json(const HwProfile& profile) {
  ordered_json collectives = ordered_json::array();
  for (const auto& table : profile.collectives) collectives.push_back(collective_json(table));
  ordered_json out = {{"schema_version", profile.schema_version},
                      {"name", profile.name},
                      {"description", profile.description},
                      {"provenance", provenance_json(profile.provenance)},
                      {"gpu", gpu_json(profile.gpu)},
                      {"efficiency", efficiency_json(profile.efficiency)},
                      {"node", node_json(profile.node)},
                      {"network", network_json(profile.network)},
                      {"collectives", collectives},
                      {"contention", contention_json(profile.contention)}};
  // Optional: written only when the profile has one, so profiles without it keep their text.
  if (profile.power.present) out["power"] = power_json(profile.power);
  return out;
}

}  // namespace moesim::hw
