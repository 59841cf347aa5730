#include "moesim/calibrate/Fitting.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "moesim/common/Check.hpp"
#include "moesim/hwprofiles/LogInterpolation.hpp"

namespace moesim::calibrate {

double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) {
    MOE_CHECK(v > 0) << "geometric mean of a non-positive value " << v;
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, static_cast<double>(digits - 1) - magnitude);
  return std::round(value * scale) / scale;
}

LineFit fit_line(const std::vector<double>& xs, const std::vector<double>& ys) {
  MOE_CHECK(!xs.empty() && xs.size() == ys.size()) << xs.size() << " x and " << ys.size() << " y values";
  const auto n = static_cast<double>(xs.size());
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    mean_x += xs[i] / n;
    mean_y += ys[i] / n;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - mean_x) * (xs[i] - mean_x);
    sxy += (xs[i] - mean_x) * (ys[i] - mean_y);
  }
  if (sxx <= 0) return {0.0, mean_x != 0 ? mean_y / mean_x : 0.0};
  const double slope = sxy / sxx;
  return {mean_y - slope * mean_x, slope};
}

double slope_through_origin(const std::vector<double>& xs, const std::vector<double>& ys) {
  double xy = 0, xx = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xy += xs[i] * ys[i];
    xx += xs[i] * xs[i];
  }
  return xx > 0 ? xy / xx : 0.0;
}

double relative_error(double model, double measured) {
  MOE_CHECK(measured != 0) << "relative error against a zero measurement";
  return (model - measured) / measured;
}

void ErrorSummary::add(double model, double measured) {
  const double e = std::fabs(relative_error(model, measured));
  mean_abs = (mean_abs * points + e) / (points + 1);
  max_abs = std::max(max_abs, e);
  ++points;
}

std::vector<std::vector<double>> fill_gemm_grid(const std::vector<double>& m_axis,
                                                const std::vector<double>& min_nk_axis,
                                                const std::vector<ShapeSample>& samples) {
  MOE_CHECK(!samples.empty()) << "no GEMM samples";
  // m -> (min_nk -> efficiencies)
  std::map<double, std::map<double, std::vector<double>>> rows;
  for (const ShapeSample& s : samples) rows[s.m][s.min_nk].push_back(s.efficiency);
  std::vector<double> row_m;
  std::vector<std::vector<double>> row_x, row_v;
  for (const auto& [m, by_nk] : rows) {
    row_m.push_back(m);
    row_x.emplace_back();
    row_v.emplace_back();
    for (const auto& [nk, values] : by_nk) {
      row_x.back().push_back(nk);
      row_v.back().push_back(geometric_mean(values));
    }
  }
  auto row_value = [&](std::size_t row, double nk) {
    return hw::interpolate_log_x(row_x[row], row_v[row], nk);
  };
  std::vector<std::vector<double>> grid(m_axis.size(), std::vector<double>(min_nk_axis.size()));
  for (std::size_t i = 0; i < m_axis.size(); ++i) {
    const double m = m_axis[i];
    auto upper = std::lower_bound(row_m.begin(), row_m.end(), m);
    for (std::size_t j = 0; j < min_nk_axis.size(); ++j) {
      const double nk = min_nk_axis[j];
      double value;
      if (upper == row_m.begin()) {
        value = row_value(0, nk);
      } else if (upper == row_m.end()) {
        value = row_value(row_m.size() - 1, nk);
      } else if (*upper == m) {
        value = row_value(static_cast<std::size_t>(upper - row_m.begin()), nk);
      } else {
        const auto hi = static_cast<std::size_t>(upper - row_m.begin());
        const std::size_t lo = hi - 1;
        const double t =
            (std::log2(m) - std::log2(row_m[lo])) / (std::log2(row_m[hi]) - std::log2(row_m[lo]));
        value = row_value(lo, nk) + t * (row_value(hi, nk) - row_value(lo, nk));
      }
      grid[i][j] = std::min(value, 1.0);
    }
  }
  return grid;
}

std::vector<CurvePoint> bin_log(std::vector<CurvePoint> points, double factor) {
  MOE_CHECK(factor > 1) << "bin factor " << factor << " must be > 1";
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) {
    return a.x < b.x || (a.x == b.x && a.value < b.value);
  });
  std::vector<CurvePoint> out;
  std::size_t i = 0;
  while (i < points.size()) {
    const double limit = points[i].x * factor;
    std::vector<double> xs, values;
    while (i < points.size() && points[i].x < limit) {
      xs.push_back(points[i].x);
      values.push_back(points[i].value);
      ++i;
    }
    out.push_back({geometric_mean(xs), median(values)});
  }
  return out;
}

MergedCurve merge_curve(const std::vector<double>& base_x, const std::vector<double>& base_value,
                        const std::vector<CurvePoint>& measured) {
  MOE_CHECK(!measured.empty()) << "no measured curve points";
  const double lo = measured.front().x, hi = measured.back().x;
  MergedCurve out;
  out.scale_low = measured.front().value / hw::interpolate_log_x(base_x, base_value, lo);
  out.scale_high = measured.back().value / hw::interpolate_log_x(base_x, base_value, hi);
  for (std::size_t i = 0; i < base_x.size(); ++i) {
    if (base_x[i] < lo) {
      out.x.push_back(base_x[i]);
      out.value.push_back(std::min(1.0, base_value[i] * out.scale_low));
      ++out.inherited_points;
    }
  }
  for (const CurvePoint& p : measured) {
    out.x.push_back(p.x);
    out.value.push_back(std::min(1.0, p.value));
  }
  for (std::size_t i = 0; i < base_x.size(); ++i) {
    if (base_x[i] > hi) {
      out.x.push_back(base_x[i]);
      out.value.push_back(std::min(1.0, base_value[i] * out.scale_high));
      ++out.inherited_points;
    }
  }
  return out;
}

double comm_bandwidth_slowdown(double alone_s, double with_compute_s, double latency_s) {
  MOE_CHECK(alone_s > latency_s) << "collective alone (" << alone_s << " s) not longer than its latency ("
                                 << latency_s << " s)";
  return (with_compute_s - latency_s) / (alone_s - latency_s);
}

double residual_compute_slowdown(double measured_slowdown, int sms, double comm_sms) {
  MOE_CHECK(sms > 0 && comm_sms >= 0 && comm_sms < sms) << "comm_sms " << comm_sms << " of " << sms;
  return measured_slowdown * (sms - comm_sms) / sms;
}

double inferred_comm_sms(double measured_slowdown, double residual, int sms) {
  MOE_CHECK(measured_slowdown > 0) << "slowdown " << measured_slowdown;
  return sms * (1.0 - residual / measured_slowdown);
}

}  // namespace moesim::calibrate
