#include "moesim/cost/GroupedGemm.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "moesim/cost/CostModel.hpp"
#include "moesim/models/LayerOps.hpp"

namespace moesim::cost {

std::int64_t grouped_row_tile(const ImplGroupedGemm& model, double mean_rows) {
  for (const ImplRowTile& t : model.row_tiles)
    if (t.max_mean_rows == 0 || mean_rows <= static_cast<double>(t.max_mean_rows)) return t.rows;
  return 1;
}

sim::KernelWork grouped_gemm_work(const hw::HwProfile& hw, const models::KernelCost& launch,
                                  models::DType dtype, const std::vector<std::int64_t>& rows,
                                  const ImplGroupedGemm& model) {
  sim::KernelWork work = kernel_work(hw, launch, dtype);
  const auto active = std::count_if(rows.begin(), rows.end(), [](std::int64_t r) { return r > 0; });
  if (active == 0) return work;
  const double total = static_cast<double>(std::accumulate(rows.begin(), rows.end(), std::int64_t{0}));
  const std::int64_t tile = grouped_row_tile(model, total / static_cast<double>(active));
  const double element = models::bytes_per_element(dtype);
  const double hbm = hw.gpu.hbm_bw_Bps * hw.memory_efficiency(launch.bytes);
  const double stream = std::min(model.stream_bytes_per_s, hbm),
               store = std::min(model.store_bytes_per_s, hbm);
  const models::GemmShape& g = launch.gemm;
  const bool wgrad = launch.name.ends_with("." + models::to_string(models::Pass::WGRAD));
  // One group's GEMM at the launch's rate for groups of its shape (grouped_gemm_efficiency: every group's
  // tiles together fill the GPU). Balanced routing gives every group the same rows: each row count is priced
  // once.
  models::KernelCost one = launch;
  one.bytes = 0;
  auto compute_ns = [&](models::GemmShape shape) {
    one.gemm = shape;
    one.flops =
        2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
    return kernel_work(hw, one, dtype).compute_ns;
  };
  auto group_ns = [&](std::int64_t r) {
    // wgrad: dW[m, n] = X[r, m]^T dY[r, n], the group's rows are the reduction; its gradient is stored after.
    if (wgrad)
      return compute_ns({g.m, g.n, r, g.groups}) +
             static_cast<double>(g.m) * static_cast<double>(g.n) * element / store * 1e9;
    const std::int64_t padded = (r + tile - 1) / tile * tile;
    const double streamed = (static_cast<double>(r) * static_cast<double>(g.n + g.k) +
                             static_cast<double>(g.n) * static_cast<double>(g.k)) *
                            element;
    return std::max(compute_ns({padded, g.n, g.k, g.groups}), streamed / stream * 1e9);
  };
  std::map<std::int64_t, double> priced;
  double ns = 0;
  for (const std::int64_t r : rows) {
    if (r <= 0) continue;
    auto [it, added] = priced.try_emplace(r, 0.0);
    if (added) it->second = group_ns(r);
    ns += it->second;
  }
  work.compute_ns = ns;
  work.comm_slowdown = hw.gemm_slowdown_with_comm(ns * 1e-9);
  return work;
}

}  // namespace moesim::cost
