// efficiency.tile_gemm of a calibrated profile from tile_gemm_bench: a persistent kernel's GEMM tile rate.
#include <algorithm>
#include <map>
#include <set>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate::detail {

/*
 * FlashMoE's processors each compute whole 128x64 output tiles with mma.sync, far from the library GEMMs
 * the efficiency table describes. The rate that matters to a megakernel is that of many waves of such
 * tiles over every SM: per dtype, the persistent case with the most tiles (FlashMoE's own grid) gives
 * value = 2mnk / (time x sustained peak of the dtype). Its rates are used as measured: the case records
 * its tile, grid and timing, not a clock the rate could be scaled by.
 */
void fit_tile_gemm(Context& c) {
  std::map<std::string, const TileGemmCase*> largest;
  for (const TileGemmCase& k : c.in.bench.tile_gemm) {
    if (k.mode != "persistent") continue;
    auto& best = largest[k.dtype];
    if (best == nullptr || k.tiles > best->tiles) best = &k;
  }
  if (largest.empty()) return;
  hw::HwProfile& p = c.out.profile;
  hw::TileGemmSpec& spec = p.efficiency.tile_gemm;
  spec = {};
  std::string fitted;
  for (const auto& [dtype, k] : largest) {
    if (!p.gpu.peak_flops.count(dtype)) {
      c.out.notes.push_back("tile_gemm " + dtype + ": the profile has no " + dtype + " peak; not fitted");
      continue;
    }
    if (spec.tile_m > 0 && (k->tile_m != spec.tile_m || k->tile_n != spec.tile_n ||
                            k->tile_k != spec.tile_k || k->blocks_per_sm != spec.blocks_per_sm)) {
      throw ConfigError("calibrate", "/efficiency/tile_gemm",
                        "tile_gemm results of " + dtype + " measured another tile or grid than the others");
    }
    spec.tile_m = k->tile_m;
    spec.tile_n = k->tile_n;
    spec.tile_k = k->tile_k;
    spec.blocks_per_sm = k->blocks_per_sm;
    const double flops =
        2.0 * static_cast<double>(k->m) * static_cast<double>(k->n) * static_cast<double>(k->k);
    spec.value[dtype] = round4(std::min(1.0, flops / k->time_s / p.sustained_peak_flops(dtype)));
    fitted += (fitted.empty() ? "" : "; ") + dtype + " " + num(spec.value[dtype], 4) + " (" +
              num(flops / k->time_s / 1e12, 4) + " TF/s at m = " + std::to_string(k->m) + ", " +
              std::to_string(k->tiles) + " tiles on " + std::to_string(k->blocks) + " blocks)";
  }
  if (spec.value.empty()) {
    spec = {};
    return;
  }
  ErrorSummary e;
  for (const TileGemmCase& k : c.in.bench.tile_gemm) {
    // Cases of at least two waves on the measured grid: the steady rate the fit describes.
    if (k.mode != "persistent" || !spec.value.count(k.dtype) || k.tiles < 2 * k.blocks) continue;
    const double flops = 2.0 * static_cast<double>(k.m) * static_cast<double>(k.n) * static_cast<double>(k.k);
    e.add(flops / *p.tile_gemm_flops(k.dtype), k.time_s);
  }
  add_residual(c, "tile_gemm", e, "persistent cases of >= 2 waves vs 2mnk / (sustained peak x value)");
  spec.source =
      "Persistent GEMM tile tasks of tile_gemm_bench " + files_tags(c, "tile_gemm") + " (p50, tile " +
      std::to_string(spec.tile_m) + "x" + std::to_string(spec.tile_n) + "x" + std::to_string(spec.tile_k) +
      ", " + std::to_string(spec.blocks_per_sm) +
      " blocks per SM less one scheduler block, mma.sync): value = 2mnk / (time x sustained peak of "
      "the dtype) of the case with the most tiles: " +
      fitted + ". Rates as measured (not scaled to a clock).";
  c.calibrated_parts.push_back("GEMM tile rate");
}

}  // namespace moesim::calibrate::detail
