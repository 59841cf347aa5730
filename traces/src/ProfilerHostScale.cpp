#include <algorithm>

#include "moesim/traces/OpAttribution.hpp"

namespace moesim::traces {

std::optional<ProfilerHostScale> profiler_host_scale(const AttributedStep& step, double untraced_issue_ms,
                                                     double untraced_forward_issue_ms) {
  if (untraced_issue_ms <= 0 || step.host_us <= step.wait_us) return std::nullopt;
  auto ratio = [](double untraced_us, double traced_us, double wait_us) {
    return std::clamp((untraced_us - wait_us) / (traced_us - wait_us), 0.05, 1.0);
  };
  const double whole = ratio(untraced_issue_ms * 1e3, step.host_us, step.wait_us);
  const double backward_host = step.host_us - step.forward_host_us,
               backward_wait = step.wait_us - step.forward_wait_us;
  const double untraced_backward_us = (untraced_issue_ms - untraced_forward_issue_ms) * 1e3;
  const bool per_pass = untraced_forward_issue_ms > 0 && step.has_backward &&
                        step.forward_host_us > step.forward_wait_us && backward_host > backward_wait &&
                        untraced_backward_us > 0;
  if (!per_pass) return ProfilerHostScale{whole, whole, false};
  return ProfilerHostScale{ratio(untraced_forward_issue_ms * 1e3, step.forward_host_us, step.forward_wait_us),
                           ratio(untraced_backward_us, backward_host, backward_wait), true};
}

}  // namespace moesim::traces
