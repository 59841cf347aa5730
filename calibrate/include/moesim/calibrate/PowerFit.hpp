#pragma once
/**
 * @file The power-cap clock model fitted from power_bench results (kernels/power_bench.cu), free of file
 * formats so that every rule can be checked by hand in a unit test. The model (hwprofiles/FORMAT.md,
 * "power"):
 *
 *   v      = rate / rate at the maximum clock                      (the first burst after a rest runs there)
 *   P_dyn  = compute_w_at_peak · (first-burst rate / dense peak) · v^speed_exponent       (GEMM while busy)
 *          + hbm_j_per_byte · HBM bytes/s + link_j_per_byte · (sent + received) bytes/s  (copies)
 *   board  = idle_w + duty · P_dyn
 *   rate   ∝ clock^clock_rate_exponent
 *
 * fit_power() takes the measured loads to the numbers, in this order:
 *   idle_w               mean power of the idle loads (P_dyn below subtracts the idle power of the load's
 *                        own GPU in its run when that GPU has an idle load: boards differ by a few watts)
 *   limit_w              the largest enforced limit of the runs' GPUs
 *   compute_w_at_peak    least squares through the origin of P_dyn = (power − idle) / duty against
 *                        first-burst rate / dense peak, over the uncapped GEMM loads (no "sw_power_cap" among
 *                        the clock reasons, or a mean clock >= 99% of the maximum)
 *   speed_exponent       over the capped GEMM loads ("sw_power_cap" and a clock < 97% of the maximum), with
 *                        v = busy / first: ln(P_dyn / (compute_w_at_peak · first / peak)) / ln v, averaged
 *   clock_rate_exponent  least squares through the origin of ln(busy / first) on ln(clock / max clock) over
 *                        the same capped loads
 *   hbm_j_per_byte       copy loads (cudaMemcpyAsync D2D: the rate is read once and written once):
 *                        least squares through the origin of P_dyn against 2 · rate
 *   link_j_per_byte      peer loads (every GPU sends and receives the rate at once): least squares through
 *                        the origin of P_dyn − hbm_j_per_byte · 2 · rate against 2 · rate
 *
 * Loads of any other kind are not used: power_bench's smcopy and gemm+smcopy (an SM-driven copy alone
 * and beside a GEMM) are dropped by load_bench_results, and fit_power() selects its loads by kind, so it
 * skips them too.
 */
#include <map>
#include <string>
#include <vector>

#include "moesim/calibrate/BenchResults.hpp"
#include "moesim/hwprofiles/HwProfile.hpp"

namespace moesim::calibrate {

/** @brief A GEMM load counts as uncapped at a mean clock of at least this share of the maximum. */
inline constexpr double kUncappedClockShare = 0.99;
/** @brief A GEMM load with sw_power_cap counts as capped below this share of the maximum clock. */
inline constexpr double kCappedClockShare = 0.97;

/** @brief The fitted section and what the fit saw. */
struct PowerFit {
  hw::PowerSpec spec;  ///< present = true; values rounded to 4 significant digits; source filled
  int idle_loads = 0;
  int uncapped_loads = 0;
  int capped_loads = 0;
  int copy_loads = 0;
  int peer_loads = 0;
  std::vector<double> speed_exponents;  ///< one per capped load, in input order
  std::vector<std::string> notes;       ///< spread of the exponents, loads left out, energies not measured
};

/** @brief Dynamic power of a load while busy: (power − idle) / duty. */
double busy_dynamic_power_w(const PowerLoad& load, double idle_w);

/** @brief Whether `load` is a GEMM load that ran at the maximum clock (see the file comment). */
bool uncapped_gemm(const PowerLoad& load, double max_clock_hz);

/** @brief Whether `load` is a GEMM load the power limit held below 97% of the maximum clock. */
bool capped_gemm(const PowerLoad& load, double max_clock_hz);

/**
 * @brief Fits the "power" section from power_bench runs (rules in the file comment).
 * @param runs         power_bench documents (all their loads are used together)
 * @param peak_flops   the profile's dense peaks by dtype (gpu.peak_flops), FLOP/s
 * @param fallback     used for an energy the runs do not measure: hbm_j_per_byte without copy loads and
 *                     link_j_per_byte without peer loads are taken from it when it is present, else 0; a note
 *                     says which
 * @param tags         the runs' source tags ("[C14]"), quoted in the source text
 * ConfigError naming the files when the runs hold no idle load, no power limit, no uncapped or no capped GEMM
 * load, or a GEMM load whose dtype has no peak.
 */
PowerFit fit_power(const std::vector<PowerRun>& runs, const std::map<std::string, double>& peak_flops,
                   const hw::PowerSpec& fallback, const std::string& tags);

/**
 * @brief The factor that turns a rate measured at `clock_hz` into the rate at `max_clock_hz`:
 * (max / clock)^clock_rate_exponent, and 1 at or above the maximum.
 */
double max_clock_rate_factor(double clock_hz, double max_clock_hz, double clock_rate_exponent);

/**
 * @brief Board power the model predicts for a measured load (with its measured duty, and for GEMMs its
 * measured speed busy / first); 0 for an idle load's dynamic part, so idle loads predict idle_w.
 */
double modelled_power_w(const hw::PowerSpec& spec, const PowerLoad& load, double dense_peak_flops);

}  // namespace moesim::calibrate
