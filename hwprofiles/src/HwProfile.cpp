#include "moesim/hwprofiles/HwProfile.hpp"

#include <algorithm>
#include <cmath>

#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/hwprofiles/LogInterpolation.hpp"

namespace moesim::hw {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string peak_dtypes(const GpuSpec& gpu) {
  std::vector<std::string> names;
  for (const auto& dtype : known_dtypes()) {
    if (gpu.peak_flops.count(dtype)) names.push_back(dtype);
  }
  return join(names);
}

bool is_known_dtype(const std::string& dtype) {
  const auto& known = known_dtypes();
  return std::find(known.begin(), known.end(), dtype) != known.end();
}

// Shapes of 0 rows (an expert that got no tokens) clamp to the first table entry like any small shape.
double as_axis(std::int64_t extent) {
  return static_cast<double>(std::max<std::int64_t>(extent, 1));
}

// The (m, min(n, k)) table at `rows` rows, bilinear in log space.
double table_efficiency(const GemmEfficiencyTable& table, double rows, std::int64_t n, std::int64_t k) {
  return interpolate_bilinear_log(table.m, table.min_nk, table.value, rows, as_axis(std::min(n, k)));
}

// Efficiency at m on one measured shape. Time per unit of n·k is m / efficiency at the measured points.
double shape_curve_efficiency(const GemmShapeCurve& curve, double m) {
  const auto& ms = curve.m;
  const auto& eff = curve.value;
  MOE_CHECK(m >= ms.front()) << "rows below the measured curve are HwProfile::gemm_efficiency's";
  if (m >= ms.back()) return eff.back();
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(ms.begin(), ms.end(), m) - ms.begin());
  const std::size_t lo = hi - 1;
  const double t_lo = ms[lo] / eff[lo];
  const double t_hi = ms[hi] / eff[hi];
  const double time = t_lo + (t_hi - t_lo) * (m - ms[lo]) / (ms[hi] - ms[lo]);
  return m / time;
}

}  // namespace

const std::vector<std::string>& known_dtypes() {
  static const std::vector<std::string> dtypes{"fp32", "tf32", "bf16", "fp16", "fp8"};
  return dtypes;
}

double HwProfile::peak_flops(const std::string& dtype) const {
  const std::string pointer = "/gpu/peak_tflops/" + dtype;
  if (!is_known_dtype(dtype)) {
    throw ConfigError(source_file, pointer, "is not a known dtype (known: " + join(known_dtypes()) + ")");
  }
  auto it = gpu.peak_flops.find(dtype);
  if (it == gpu.peak_flops.end()) {
    throw ConfigError(
        source_file, pointer,
        "is not given: " + gpu.name + " has no " + dtype + " peak (given: " + peak_dtypes(gpu) + ")");
  }
  return it->second;
}

double HwProfile::sustained_peak_flops(const std::string& dtype) const {
  return peak_flops(dtype) * gpu.sustained_clock_factor;
}

double HwProfile::gemm_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const {
  const double rows = as_axis(m);
  for (const GemmShapeCurve& curve : efficiency.gemm_shapes.shapes) {
    if (curve.n != n || curve.k != k) continue;
    const double first = curve.m.front();
    if (rows >= first) return shape_curve_efficiency(curve, rows);
    // Fewer rows than measured follow the table's trend, scaled to agree at the first measured m: a shape
    // measured from 4096 rows keeps its efficiency at 2048 instead of taking 4096's time. Below the
    // table's first row as well, the time stays flat (one wave of tiles takes as long however few rows).
    const double floor_rows = std::max(rows, std::min(efficiency.gemm.m.front(), first));
    const double trend =
        table_efficiency(efficiency.gemm, floor_rows, n, k) / table_efficiency(efficiency.gemm, first, n, k);
    return std::min(1.0, curve.value.front() * trend) * rows / floor_rows;
  }
  return gemm_table_efficiency(m, n, k);
}

double HwProfile::gemm_table_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const {
  return table_efficiency(efficiency.gemm, as_axis(m), n, k);
}

double HwProfile::gemm_dtype_factor(const std::string& dtype) const {
  auto it = efficiency.gemm_dtype_factor.find(dtype);
  return it == efficiency.gemm_dtype_factor.end() ? 1.0 : it->second;
}

double HwProfile::grouped_gemm_efficiency(std::int64_t m_per_group, std::int64_t n, std::int64_t k,
                                          std::int64_t groups) const {
  MOE_CHECK(groups >= 1) << "grouped GEMM with " << groups << " groups";
  const auto& table = efficiency.gemm;
  double machine_fill = gemm_efficiency(m_per_group * groups, n, k);
  double largest_nk = table.min_nk.back();
  double per_group_intensity =
      interpolate_bilinear_log(table.m, table.min_nk, table.value, as_axis(m_per_group), largest_nk);
  return efficiency.grouped_gemm_factor * std::min(machine_fill, per_group_intensity);
}

double HwProfile::achieved_gemm_flops(const std::string& dtype, std::int64_t m, std::int64_t n,
                                      std::int64_t k) const {
  return sustained_peak_flops(dtype) * gemm_efficiency(m, n, k) * gemm_dtype_factor(dtype);
}

double HwProfile::attention_efficiency(std::int64_t seq, AttentionPass pass, AttentionImpl impl,
                                       std::int64_t batch_heads) const {
  if (impl == AttentionImpl::UNFUSED && efficiency.attention_unfused_fwd.x.empty()) {
    throw ConfigError(source_file.empty() ? name : source_file, "/efficiency/attention_unfused_fwd",
                      "is missing: unfused attention needs a curve calibrated from attention_bench results");
  }
  const bool own_backward =
      impl == AttentionImpl::FUSED && pass == AttentionPass::BACKWARD && !efficiency.attention_bwd.x.empty();
  const auto& curve = own_backward                     ? efficiency.attention_bwd
                      : impl == AttentionImpl::UNFUSED ? efficiency.attention_unfused_fwd
                                                       : efficiency.attention_fwd;
  const double value =
      interpolate_log_x(curve.x, curve.value, equal_work_seq(as_axis(seq), batch_heads, curve.batch_heads));
  return pass == AttentionPass::FORWARD || own_backward ? value : value * efficiency.attention_bwd_factor;
}

double HwProfile::attention_row_factor(std::int64_t seq, std::int64_t batch_heads, double row_keys) const {
  const double a = efficiency.attention_rows.overhead_keys;
  if (a <= 0 || row_keys <= 0) return 1.0;
  const double reading = equal_work_seq(as_axis(seq), batch_heads, efficiency.attention_fwd.batch_heads);
  return (1.0 + 2.0 * a / reading) / (1.0 + a / row_keys);
}

double HwProfile::gemm_slowdown_with_comm(double kernel_s) const {
  if (contention.gemm_kernel_s.empty()) return contention.compute_slowdown_with_comm;
  return interpolate_log_x(contention.gemm_kernel_s, contention.gemm_slowdown, kernel_s);
}

std::optional<double> HwProfile::tile_gemm_flops(const std::string& dtype) const {
  auto it = efficiency.tile_gemm.value.find(dtype);
  if (it == efficiency.tile_gemm.value.end()) return std::nullopt;
  return sustained_peak_flops(dtype) * it->second;
}

std::optional<RouterTopkCost> HwProfile::router_topk(std::int64_t tokens, std::int64_t top_k) const {
  const RouterTopkTable& t = efficiency.router_topk;
  if (t.top_k.empty()) return std::nullopt;
  const double k = as_axis(top_k);
  RouterTopkCost cost;
  cost.time_s =
      interpolate_log_x(t.top_k, t.fixed_s, k) +
      interpolate_log_x(t.top_k, t.s_per_token, k) * static_cast<double>(std::max<std::int64_t>(tokens, 0));
  cost.comm_slowdown = interpolate_log_x(t.top_k, t.comm_slowdown, k);
  cost.comm_drag = interpolate_log_x(t.top_k, t.comm_drag, k);
  return cost;
}

double equal_work_seq(double seq, std::int64_t batch_heads, std::int64_t reference) {
  if (batch_heads <= 0 || reference <= 0) return seq;
  return seq * std::sqrt(static_cast<double>(batch_heads) / static_cast<double>(reference));
}

double gemm_sm_fraction(std::int64_t m, std::int64_t n, std::int64_t groups, int sm_count) {
  MOE_CHECK(sm_count > 0) << "sm_count " << sm_count;
  constexpr double kTile = 128;
  const double tiles = std::ceil(static_cast<double>(m) / kTile) * std::ceil(static_cast<double>(n) / kTile) *
                       static_cast<double>(std::max<std::int64_t>(groups, 1));
  return std::clamp(tiles / sm_count, 1.0 / sm_count, 1.0);
}

double HwProfile::memory_efficiency(double bytes) const {
  return interpolate_log_x(efficiency.memory.x, efficiency.memory.value, bytes);
}

double HwProfile::fabric_injection_bw_Bps(int peers) const {
  MOE_CHECK(peers >= 1) << "fabric injection towards " << peers << " peers";
  const auto& fabric = node.fabric;
  // A mesh has one link per peer; a switch lets any traffic pattern use every link.
  int links_used =
      fabric.type == FabricType::MESH ? std::min(peers, fabric.links_per_gpu) : fabric.links_per_gpu;
  return links_used * fabric.usable_link_bw_Bps;
}

double HwProfile::network_bw_per_gpu_Bps() const {
  return network.nics_per_node * network.nic_usable_bw_Bps / node.gpus_per_node;
}

namespace {
bool matches(const CollectiveTable& t, CollectiveKind kind, CollectiveScope scope, bool copy_engine) {
  return t.kind == kind && t.scope == scope &&
         (t.algorithm == CollectiveAlgorithm::COPY_ENGINE) == copy_engine;
}
}  // namespace

bool HwProfile::has_collective(CollectiveKind kind, CollectiveScope scope, bool copy_engine) const {
  return std::any_of(collectives.begin(), collectives.end(),
                     [&](const CollectiveTable& t) { return matches(t, kind, scope, copy_engine); });
}

const CollectiveTable& HwProfile::collective_table(CollectiveKind kind, int gpus, CollectiveScope scope,
                                                   bool copy_engine) const {
  const CollectiveTable* smallest_fitting = nullptr;
  const CollectiveTable* largest = nullptr;
  for (const auto& table : collectives) {
    if (!matches(table, kind, scope, copy_engine)) continue;
    if (table.gpus >= gpus && (!smallest_fitting || table.gpus < smallest_fitting->gpus))
      smallest_fitting = &table;
    if (!largest || table.gpus > largest->gpus) largest = &table;
  }
  if (smallest_fitting) return *smallest_fitting;
  if (largest) return *largest;
  throw ConfigError(source_file, "/collectives",
                    "has no " + std::string(copy_engine ? "copy-engine " : "") + to_string(kind) +
                        " table for scope " + to_string(scope));
}

double HwProfile::busbw_Bps(CollectiveKind kind, int gpus, CollectiveScope scope, double bytes,
                            bool copy_engine) const {
  const auto& table = collective_table(kind, gpus, scope, copy_engine);
  return interpolate_log_x(table.bytes, table.busbw_Bps, bytes);
}

double HwProfile::step_latency_s(CollectiveKind kind, int gpus, CollectiveScope scope,
                                 bool copy_engine) const {
  return collective_table(kind, gpus, scope, copy_engine).step_latency_s;
}

double HwProfile::collective_time_s(CollectiveKind kind, int gpus, CollectiveScope scope, double bytes,
                                    bool copy_engine) const {
  if (gpus <= 1) return 0.0;
  return collective_steps(kind, gpus) * step_latency_s(kind, gpus, scope, copy_engine) +
         bus_bytes(kind, gpus, bytes) / busbw_Bps(kind, gpus, scope, bytes, copy_engine);
}

int collective_steps(CollectiveKind kind, int gpus) {
  MOE_CHECK(gpus >= 1) << "collective over " << gpus << " GPUs";
  switch (kind) {
    case CollectiveKind::ALL_REDUCE:
      return 2 * (gpus - 1);
    case CollectiveKind::ALL_GATHER:
    case CollectiveKind::REDUCE_SCATTER:
      return gpus - 1;
    case CollectiveKind::ALL_TO_ALL:
      return 1;
  }
  return 1;
}

double bus_bytes(CollectiveKind kind, int gpus, double bytes) {
  MOE_CHECK(gpus >= 1) << "collective over " << gpus << " GPUs";
  double n = gpus;
  double factor = kind == CollectiveKind::ALL_REDUCE ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
  return bytes * factor;
}

}  // namespace moesim::hw
