#include <algorithm>
#include <iterator>
#include <vector>

#include "moesim/traces/OpAttribution.hpp"

namespace moesim::traces {
namespace {

constexpr double kLeastScale = 0.05;  // a profiler that inflated host work 20-fold is not a profiler at work

// The pass's issue time had its host work run `scale` times as long.
double issue_us(const std::vector<HostSegment>& segments, double scale) {
  double sum = 0;
  for (const HostSegment& s : segments) sum += std::max(scale * s.host_us + s.wait_us, s.gpu_busy_us);
  return sum;
}

// The scale at which `segments` issue in `untraced_us`: issue_us grows with the scale, so bisect.
double scale_to(const std::vector<HostSegment>& segments, double untraced_us) {
  if (issue_us(segments, 1.0) <= untraced_us) return 1.0;
  if (issue_us(segments, kLeastScale) >= untraced_us) return kLeastScale;
  double low = kLeastScale, high = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (low + high);
    (issue_us(segments, mid) < untraced_us ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

// One segment per pass from the step's totals, where the step has no segments of its own.
std::vector<HostSegment> segments_of(const AttributedStep& step) {
  if (!step.segments.empty()) return step.segments;
  if (step.forward_host_us <= 0) return {HostSegment{false, step.host_us - step.wait_us, step.wait_us, 0}};
  return {HostSegment{false, step.forward_host_us - step.forward_wait_us, step.forward_wait_us, 0},
          HostSegment{true, step.host_us - step.forward_host_us - (step.wait_us - step.forward_wait_us),
                      step.wait_us - step.forward_wait_us, 0}};
}

std::vector<HostSegment> of_pass(const std::vector<HostSegment>& segments, bool backward) {
  std::vector<HostSegment> out;
  std::copy_if(segments.begin(), segments.end(), std::back_inserter(out),
               [&](const HostSegment& s) { return s.backward == backward; });
  return out;
}

}  // namespace

std::optional<ProfilerHostScale> profiler_host_scale(const AttributedStep& step, double untraced_issue_ms,
                                                     double untraced_forward_issue_ms) {
  if (untraced_issue_ms <= 0 || step.host_us <= step.wait_us) return std::nullopt;
  const std::vector<HostSegment> segments = segments_of(step);
  const double whole = scale_to(segments, untraced_issue_ms * 1e3);
  const double backward_host = step.host_us - step.forward_host_us,
               backward_wait = step.wait_us - step.forward_wait_us;
  const double untraced_backward_us = (untraced_issue_ms - untraced_forward_issue_ms) * 1e3;
  const bool per_pass = untraced_forward_issue_ms > 0 && step.has_backward &&
                        step.forward_host_us > step.forward_wait_us && backward_host > backward_wait &&
                        untraced_backward_us > 0;
  if (!per_pass) return ProfilerHostScale{whole, whole, false};
  return ProfilerHostScale{scale_to(of_pass(segments, false), untraced_forward_issue_ms * 1e3),
                           scale_to(of_pass(segments, true), untraced_backward_us), true};
}

}  // namespace moesim::traces
