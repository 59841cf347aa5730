#pragma once
/**
 * @file The fitting math of `moesim calibrate`, free of file formats so that every rule can be
 * checked by hand in a unit test.
 *
 * The fitted models are the ones the engine evaluates (hwprofiles/FORMAT.md, sim/src/Sharing.cpp):
 *
 *   GEMM        efficiency(m, min(n,k)) bilinear in log2 over a grid      -> fill_gemm_grid()
 *   curves      efficiency(x) linear in log2 x, clamped                   -> merge_curve(), bin_log()
 *   collective  time = steps * step_latency + bus_bytes / busbw(size)     -> fit_collective()
 * (CollectiveFit.hpp) contention  a comm kernel holds comm_sms SMs; compute on the rest is slowed by a
 * residual r; collective bandwidth is divided by s while compute runs   -> the three helpers below
 */
#include <string>
#include <vector>

#include "moesim/common/Statistics.hpp"

namespace moesim::calibrate {

using moesim::median;

/** @brief exp(mean(log v)); every value must be > 0. 0 for none. */
double geometric_mean(const std::vector<double>& values);

/** @brief `value` rounded to `digits` significant decimal digits (the precision the profile keeps). */
double round_significant(double value, int digits);

/** @brief Relative error (model − measured) / measured. */
double relative_error(double model, double measured);

/** @brief y = intercept + slope · x. */
struct LineFit {
  double intercept = 0;
  double slope = 0;
};

/**
 * @brief Least-squares line through (xs, ys). One distinct x gives the line through the origin and that
 * point's mean. @pre xs.size() == ys.size() > 0.
 */
LineFit fit_line(const std::vector<double>& xs, const std::vector<double>& ys);

/** @brief Least squares through the origin: the slope b minimising Σ (y − b x)²; 0 when every x is 0. */
double slope_through_origin(const std::vector<double>& xs, const std::vector<double>& ys);

/** @brief Max and mean of |relative error| over a set of (model, measured) pairs. */
struct ErrorSummary {
  int points = 0;
  double max_abs = 0;   ///< max |(model − measured) / measured|
  double mean_abs = 0;  ///< mean of the same
  /** @brief Adds one pair. */
  void add(double model, double measured);
};

/** @brief One measured GEMM: rows m, min(n, k), and the achieved fraction of the sustained peak. */
struct ShapeSample {
  double m = 0;
  double min_nk = 0;
  double efficiency = 0;
};

/**
 * @brief Fills the profile's (m, min_nk) grid from measured shapes by interpolation in log shape.
 *
 * 1. Samples with the same m form one row curve over log2(min_nk); samples at the same (m, min_nk)
 *    are merged by their geometric mean. A row curve is linear in log2(min_nk) between its samples
 *    and clamped beyond them.
 * 2. Grid node (m_i, nk_j): the row curves of the nearest measured m at or below and at or above
 *    m_i, evaluated at nk_j, interpolated linearly in log2 m (clamped to the first / last measured m).
 * 3. Values are capped at 1 (the profile's efficiencies lie in (0, 1]).
 * @pre samples non-empty, all values > 0; axes strictly increasing and positive.
 */
std::vector<std::vector<double>> fill_gemm_grid(const std::vector<double>& m_axis,
                                                const std::vector<double>& min_nk_axis,
                                                const std::vector<ShapeSample>& samples);

/** @brief A curve point: axis value x > 0 and the value there. */
struct CurvePoint {
  double x = 0;
  double value = 0;
};

/**
 * @brief Groups points into bins of `factor`× in x, starting at the smallest x: a bin holds every
 * point with x < (first x of the bin) · factor. Each bin becomes one point at the geometric mean
 * of its x with the median of its values. Output sorted by x.
 */
std::vector<CurvePoint> bin_log(std::vector<CurvePoint> points, double factor);

/** @brief A curve with its provenance note: which x came from the base profile. */
struct MergedCurve {
  std::vector<double> x;
  std::vector<double> value;
  int inherited_points = 0;  ///< base points kept outside the measured range
  double scale_low = 1;      ///< factor applied to the inherited points below the measured range
  double scale_high = 1;     ///< ... and above it
};

/**
 * @brief Measured points (sorted, distinct x) define the curve inside [first x, last x]. Base points
 * strictly outside that range are kept, scaled so the curve stays continuous at the measured edge:
 * below, by measured(first) / base(first x); above, by measured(last) / base(last x), where base(x)
 * is the base curve interpolated in log2 x. Values are capped at 1.
 * @pre measured non-empty; base x strictly increasing.
 */
MergedCurve merge_curve(const std::vector<double>& base_x, const std::vector<double>& base_value,
                        const std::vector<CurvePoint>& measured);

/**
 * @brief Bandwidth slowdown of a collective under compute, in the engine's terms: only the
 * transfer term is divided by s, so s = (t_with − latency) / (t_alone − latency).
 */
double comm_bandwidth_slowdown(double alone_s, double with_compute_s, double latency_s);

/**
 * @brief The compute slowdown left after the SMs a comm kernel holds: the engine runs compute on
 * sms − comm_sms SMs and multiplies by r, so r = measured slowdown · (sms − comm_sms) / sms.
 */
double residual_compute_slowdown(double measured_slowdown, int sms, double comm_sms);

/**
 * @brief The SMs a comm kernel held, given the measured GEMM slowdown and the residual r:
 * slowdown = r · sms / (sms − c)  =>  c = sms · (1 − r / slowdown).
 */
double inferred_comm_sms(double measured_slowdown, double residual, int sms);

}  // namespace moesim::calibrate
