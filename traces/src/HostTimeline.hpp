#pragma once
/**
 * @file Where a traced step's host time goes between its launches, for OpAttribution: each thread's clock
 * and the launch queue a host far ahead of its GPU fills.
 */
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <vector>

#include "moesim/traces/TorchTrace.hpp"

namespace moesim::traces::detail {

// The GPU work launched and not yet started. With about a thousand launches ahead of it the driver's launch
// queue is full, and a launch waits inside its call until a slot frees, when a kernel ends: that wait is the
// GPU's pace, not host work. On an H200 host the first wait came with about 875 launches queued
// (data/calibration/2026-11-29-nvidia-h200-launch-under-load). Below that no launch is taken to wait, and
// above it only what the call took beyond a typical launch: with hundreds of tiny kernels queued one ends
// inside almost every launch call, which is no sign of waiting (from 512 queued and whole calls, 0.3-0.7% of
// three committed traces' host time would have been taken away; now one H100 loop trace loses 0.02 ms).
class LaunchQueue {
 public:
  static constexpr std::size_t kFull = 875;

  // `typical_us`: the trace's median launch call, what a launch takes without waiting.
  explicit LaunchQueue(double typical_us) : typical_us_(typical_us) {}

  // How long `call`, launching `g`, waited for a slot.
  double wait(const HostCall& call, const GpuEvent& g) {
    while (!starts_.empty() && starts_.top() <= call.ts_us) starts_.pop();
    ends_.erase(ends_.begin(), ends_.lower_bound(call.ts_us));
    double waited = 0;
    if (starts_.size() >= kFull) {
      // The call returned once a slot freed: at the last end of earlier work within it.
      // The call returned once a slot freed, at the last end of earlier work within it; what it took beyond a
      // typical launch is the most it waited.
      auto last = ends_.upper_bound(call.ts_us + call.dur_us);
      if (last != ends_.begin())
        waited =
            std::clamp(std::min(*std::prev(last) - call.ts_us, call.dur_us - typical_us_), 0.0, call.dur_us);
    }
    starts_.push(g.ts_us);
    ends_.insert(g.ts_us + g.dur_us);
    return waited;
  }

 private:
  std::priority_queue<double, std::vector<double>, std::greater<>> starts_;
  std::multiset<double> ends_;
  double typical_us_;
};

// Each launching thread's host clock: where its host work since its last item began.
class HostClocks {
 public:
  HostClocks(std::int64_t main_tid, double begin) : main_tid_(main_tid), begin_(begin) {}

  bool started() const { return !since_.empty(); }

  // The host time `call`'s thread worked before it, since its last item; the thread's clock restarts there.
  double before(const HostCall& call) {
    auto [ref, fresh] = since_.try_emplace(call.tid, call.tid == main_tid_ ? begin_ : call.ts_us);
    // Autograd's thread starts when the step's thread hands it the backward: its first launch also pays
    // for what ran since the step thread's last one (the loss, the engine starting up).
    if (auto main = since_.find(main_tid_); fresh && main != since_.end() && call.tid != main_tid_)
      ref->second = std::min(main->second, call.ts_us);
    // ... and hands it back: the step's thread, blocked in backward() meanwhile, works again from there.
    if (call.tid == main_tid_)
      ref->second = std::max(ref->second, std::min(other_threads_until_, call.ts_us));
    else
      other_threads_until_ = std::max(other_threads_until_, call.ts_us);
    const double host = std::max(0.0, call.ts_us - ref->second);
    ref->second = call.ts_us;
    return host;
  }

  // `tid` works again from `t` (a wait ended there).
  void resume(std::int64_t tid, double t) { since_[tid] = t; }

  // The latest clock of any thread, `begin` at least.
  double latest(double begin) const {
    for (const auto& [tid, t] : since_) begin = std::max(begin, t);
    return begin;
  }

 private:
  std::int64_t main_tid_;
  double begin_;
  std::map<std::int64_t, double> since_;
  double other_threads_until_ =
      -std::numeric_limits<double>::infinity();  // the latest item of another thread
};

}  // namespace moesim::traces::detail
