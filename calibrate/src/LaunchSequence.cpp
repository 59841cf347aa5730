#include "LaunchSequence.hpp"

#include <map>
#include <set>
#include <string>

namespace moesim::calibrate::detail {
namespace {

using traces::GpuKind;
using traces::TracedItem;

// What makes two traced items "the same launch" across layers and experts: the CPU op that launched it (a
// kernel's name changes with its size: cuBLAS picks per shape, elementwise kernels vectorize per alignment),
// any GEMM alike.
std::string signature(const TracedItem& item) {
  if (item.kind == TracedItem::Kind::SYNC) return "<sync>";
  if (item.gpu.kind == GpuKind::GEMM) return "<gemm>";
  return item.cpu_op.empty() ? item.gpu.name : item.cpu_op + "/" + traces::to_string(item.gpu.kind);
}

std::string signature(const std::vector<TracedItem>& items, std::size_t begin, std::size_t end) {
  std::string s;
  for (std::size_t i = begin; i < end; ++i) s += signature(items[i]) + "\n";
  return s;
}

// A launch whose CPU op the profiler lost (no correlation) can be any launch of a loop's body.
constexpr int kLostOp = -1;
bool same_launch(int a, int b) {
  return a == b || a == kLostOp || b == kLostOp;
}

// Whether ids[begin, end) are ids[body, body + period) with some left out, in order (autograd's first
// iteration of a loop assigns the gradients the later ones accumulate into: it lacks their add_).
bool thinned_copy(const std::vector<int>& ids, std::size_t begin, std::size_t end, std::size_t body,
                  std::size_t period) {
  std::size_t j = body;
  for (std::size_t i = begin; i < end; ++i) {
    while (j < body + period && !same_launch(ids[j], ids[i])) ++j;
    if (j == body + period) return false;
    ++j;
  }
  return true;
}

bool periodic(const std::vector<int>& ids, std::size_t begin, std::size_t period, std::size_t repeats) {
  for (std::size_t i = begin + period; i < begin + period * repeats; ++i)
    if (!same_launch(ids[i], ids[i - period])) return false;
  return true;
}

// Whether ids[begin, end) are launches of the body ids[body, body + period), but for at most `foreign` of
// them (two first iterations of autograd's backward of a loop: the first assigns the gradients the others
// accumulate into, the second accumulates with an out-of-place add where the rest add in place).
bool mostly_body(const std::vector<int>& ids, std::size_t begin, std::size_t end, std::size_t body,
                 std::size_t period, int foreign) {
  const std::set<int> known(ids.begin() + static_cast<long>(body),
                            ids.begin() + static_cast<long>(body + period));
  for (std::size_t i = begin; i < end; ++i)
    if (ids[i] != kLostOp && known.count(ids[i]) == 0 && --foreign < 0) return false;
  return true;
}

// A window that starts inside the loop's irregular first iterations (autograd's backward: those are the last
// experts of the forward, and the window begins after their last odd launch) ends inside its last regular
// iteration: the launches after it that continue the period are that iteration's, not work after the loop.
// Together with the irregular launches before the window they make up at least one iteration.
ExpertLoop with_continuation(const std::vector<int>& ids, ExpertLoop loop) {
  if (loop.thinned_before == 0 || loop.thinned_after != 0) return loop;
  std::size_t tail = 0;
  while (tail + 1 < loop.period && loop.end() + tail < ids.size() &&
         same_launch(ids[loop.end() + tail], ids[loop.end() + tail - loop.period]))
    ++tail;
  if (tail > 0 && loop.thinned_before + tail >= loop.period) loop.thinned_after = tail;
  return loop;
}

}  // namespace

std::vector<TracedItem> average(const std::vector<std::vector<TracedItem>>& copies) {
  std::vector<TracedItem> out = copies.front();
  for (std::size_t i = 0; i < out.size(); ++i) {
    double host = 0, wait = 0, gpu = 0;
    for (const auto& c : copies) {
      host += c[i].host_us;
      wait += c[i].wait_us;
      gpu += c[i].gpu.dur_us;
    }
    const auto n = static_cast<double>(copies.size());
    out[i].host_us = host / n;
    out[i].wait_us = wait / n;
    out[i].gpu.dur_us = gpu / n;
  }
  return out;
}

std::vector<TracedItem> representative(const std::vector<const traces::OpCall*>& calls, int calls_per_layer) {
  std::map<std::string, std::vector<std::vector<TracedItem>>> by_signature;
  std::string best;
  for (const traces::OpCall* c : calls) {
    std::vector<std::vector<TracedItem>> parts;
    const std::size_t n = c->items.size();
    if (calls_per_layer > 1 && n % static_cast<std::size_t>(calls_per_layer) == 0) {
      const std::size_t part = n / static_cast<std::size_t>(calls_per_layer);
      for (std::size_t p = 0; p < n; p += part)
        parts.emplace_back(c->items.begin() + static_cast<long>(p),
                           c->items.begin() + static_cast<long>(p + part));
    } else {
      parts.push_back(c->items);
    }
    for (auto& part : parts) {
      const std::string s = signature(part, 0, part.size());
      auto& bucket = by_signature[s];
      bucket.push_back(std::move(part));
      if (best.empty() || bucket.size() > by_signature[best].size()) best = s;
    }
  }
  return average(by_signature[best]);
}

std::optional<ExpertLoop> find_expert_loop(const std::vector<TracedItem>& items, std::size_t experts) {
  if (experts < 2) return std::nullopt;
  std::map<std::string, int> id_of;
  std::vector<int> ids;
  for (const TracedItem& item : items) {
    const bool lost = item.kind == TracedItem::Kind::LAUNCH && item.cpu_op.empty() &&
                      item.gpu.kind != traces::GpuKind::GEMM;
    ids.push_back(lost ? kLostOp
                       : id_of.emplace(signature(item), static_cast<int>(id_of.size())).first->second);
  }
  const std::size_t n = items.size();
  // All `experts` iterations alike, or all but the first or the last, which may be a thinned copy, or (eight
  // experts or more) all but two first or last ones that are mostly the body's launches.
  for (std::size_t repeats : {experts, experts - 1, experts - 2}) {
    if (repeats < 2 || (repeats == experts - 2 && experts < 8)) continue;
    for (std::size_t period = n / repeats; period >= 1; --period) {
      for (std::size_t begin = 0; begin + period * repeats <= n; ++begin) {
        if (!periodic(ids, begin, period, repeats)) continue;
        if (repeats == experts) return ExpertLoop{begin, period, experts};
        const std::size_t end = begin + period * repeats;
        if (repeats == experts - 1) {
          for (std::size_t len = period - 1; len >= period / 2 && len > 0; --len) {
            if (len <= begin && thinned_copy(ids, begin - len, begin, begin, period))
              return with_continuation(ids, ExpertLoop{begin, period, repeats, len, 0});
            if (end + len <= n && thinned_copy(ids, end, end + len, begin, period))
              return ExpertLoop{begin, period, repeats, 0, len};
          }
          continue;
        }
        for (std::size_t len = 2 * period; len >= period && len > 0; --len) {
          if (len <= begin && mostly_body(ids, begin - len, begin, begin, period, 2))
            return with_continuation(ids, ExpertLoop{begin, period, repeats, len, 0});
          if (end + len <= n && mostly_body(ids, end, end + len, begin, period, 2))
            return ExpertLoop{begin, period, repeats, 0, len};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace moesim::calibrate::detail
