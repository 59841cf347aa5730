#include "moesim/traces/OpAttribution.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>

#include "HostTimeline.hpp"
#include "moesim/common/Error.hpp"
#include "moesim/common/Statistics.hpp"
#include "moesim/traces/ModuleRanges.hpp"

namespace moesim::traces {
namespace {

constexpr std::array<const char*, 16> kOpNames = {
    "attn_norm",    "attn_qkv",       "attn_core", "attn_out",       "mlp_norm",  "gate",
    "permute",      "routed_experts", "unpermute", "shared_experts", "dense_ffn", "residual_add",
    "model_inputs", "final_norm",     "dispatch",  "combine"};
constexpr const char* kAutogradNode = "autograd::engine::evaluate_function";

struct LayerRange {
  const Range* range;
  int layer;
  std::string op;
  bool qk_norm = false;
};

constexpr const char* kQkNormRange = "qk_norm";

// `moesim.L<layer>.<name>` with a name moesim knows.
std::optional<LayerRange> layer_range(const Range& r) {
  const std::string prefix = "moesim.L";
  if (r.name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t dot = r.name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return std::nullopt;
  const std::string digits = r.name.substr(prefix.size(), dot - prefix.size());
  if (digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const std::string name = r.name.substr(dot + 1);
  auto op = moesim_op_of_range(name);
  if (!op) return std::nullopt;
  return LayerRange{&r, std::stoi(digits), *op, name == kQkNormRange};
}

// Those of `ranges` that are moesim's layer ranges, in their order.
std::vector<LayerRange> layer_ranges_of(const std::vector<Range>& ranges) {
  std::vector<LayerRange> out;
  for (const Range& r : ranges)
    if (auto lr = layer_range(r)) out.push_back(*lr);
  return out;
}

// The innermost range of `ranges` on thread `tid` that holds time `t`.
const LayerRange* innermost(const std::vector<LayerRange>& ranges, std::int64_t tid, double t) {
  const LayerRange* best = nullptr;
  for (const LayerRange& r : ranges) {
    if (r.range->tid != tid || t < r.range->ts_us || t > r.range->end_us()) continue;
    if (best == nullptr || r.range->dur_us < best->range->dur_us) best = &r;
  }
  return best;
}

// One thread's autograd nodes by start time, each with the node that encloses it (a thread's CPU ops nest),
// so the innermost node holding a time is found in O(log n + depth), not by scanning every node per launch
// (an eager backward has thousands of each).
struct NodeIndex {
  std::vector<const CpuOp*> nodes;
  std::vector<int> parent;  // index of the enclosing node, -1 for none

  void nest() {
    std::sort(nodes.begin(), nodes.end(), [](const CpuOp* a, const CpuOp* b) {
      return a->ts_us != b->ts_us ? a->ts_us < b->ts_us : a->dur_us > b->dur_us;
    });
    parent.assign(nodes.size(), -1);
    std::vector<int> open;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      while (!open.empty() && end(open.back()) < nodes[i]->ts_us) open.pop_back();
      parent[i] = open.empty() ? -1 : open.back();
      open.push_back(static_cast<int>(i));
    }
  }

  // The innermost node with a sequence number that holds time t: every node holding t encloses the last one
  // to start at or before t, or is it.
  const CpuOp* innermost_with_sequence(double t) const {
    const auto after = std::upper_bound(nodes.begin(), nodes.end(), t,
                                        [](double time, const CpuOp* n) { return time < n->ts_us; });
    for (int i = static_cast<int>(after - nodes.begin()) - 1; i >= 0; i = parent[static_cast<std::size_t>(i)])
      if (end(i) >= t && nodes[static_cast<std::size_t>(i)]->sequence)
        return nodes[static_cast<std::size_t>(i)];
    return nullptr;
  }

 private:
  double end(int i) const {
    const CpuOp* n = nodes[static_cast<std::size_t>(i)];
    return n->ts_us + n->dur_us;
  }
};

using detail::HostClocks;
using detail::LaunchQueue;

class Attributor {
 public:
  explicit Attributor(const TorchTrace& trace) : trace_(trace) {
    // A trace without moesim's ranges (a user's own) has its ops read from its module hierarchy, if it has
    // one.
    std::vector<LayerRange> layer_ranges = layer_ranges_of(trace.ranges);
    if (layer_ranges.empty()) {
      module_ranges_ = op_ranges_from_modules(trace);
      layer_ranges = layer_ranges_of(module_ranges_);
    }
    out_.ops_from_modules = !module_ranges_.empty();
    const std::vector<Range>& ranges = out_.ops_from_modules ? module_ranges_ : trace.ranges;
    const Range* step = nullptr;
    for (const Range& r : ranges)
      if (r.name == "moesim.step") step = &r;
    if (step != nullptr) {
      begin_ = step->ts_us;
      end_ = step->end_us();
      main_tid_ = step->tid;
      out_.host_us = step->dur_us;
      for (const Range& r : ranges)
        if (r.name == "moesim.forward" && r.tid == main_tid_ && r.ts_us >= begin_ && r.end_us() <= end_) {
          forward_begin_ = r.ts_us;
          forward_end_ = r.end_us();
        }
      if (forward_end_) out_.forward_host_us = *forward_end_ - begin_;
    } else {
      begin_ = trace.calls.empty() ? 0 : trace.calls.front().ts_us;
      end_ = trace.calls.empty() ? 0 : trace.calls.back().ts_us + trace.calls.back().dur_us;
      out_.host_us = end_ - begin_;
    }
    for (const LayerRange& lr : layer_ranges) {
      if (lr.range->ts_us < begin_ || lr.range->ts_us > end_) continue;
      ranges_.push_back(lr);
      out_.layers = std::max(out_.layers, lr.layer + 1);
    }
    add_forward_gaps();
    for (const GpuEvent& g : trace.gpu)
      if (g.correlation >= 0) gpu_by_correlation_.emplace(g.correlation, &g);
    for (const CpuOp& op : trace.cpu_ops) {
      if (op.external_id >= 0) cpu_by_external_.emplace(op.external_id, &op);
      if (op.ts_us < begin_ || op.ts_us > end_) continue;
      if (op.name.rfind(kAutogradNode, 0) == 0) {
        nodes_[op.tid].nodes.push_back(&op);
      } else if (op.sequence) {
        if (const LayerRange* r = innermost(ranges_, op.tid, op.ts_us))
          forward_of_sequence_.emplace(*op.sequence, r);
      }
    }
    for (auto& [tid, index] : nodes_) index.nest();
    // A CPU op that made no autograd node (a device->host copy) can carry the sequence number of the next
    // one: a number an op inside a layer range holds stays that op's.
    for (const CpuOp& op : trace.cpu_ops) {
      if (op.ts_us < begin_ || op.ts_us > end_ || !op.sequence || op.name.rfind(kAutogradNode, 0) == 0)
        continue;
      if (const LayerRange* r = innermost(gaps_, op.tid, op.ts_us))
        forward_of_sequence_.emplace(*op.sequence, r);
    }
  }

  AttributedStep run() {
    out_.file = trace_.file;
    std::map<std::int64_t, bool> seen_correlation;
    HostClocks clocks(main_tid_, begin_);
    std::optional<ItemAt> first_of_pass[2];  // forward, backward
    // The latest end of the GPU work launched so far (every stream: a sync on one may wait for another's work
    // through an event): a blocking call waits for the GPU until then, and what it takes beyond is its own
    // cost.
    double gpu_busy_until = -std::numeric_limits<double>::infinity();
    LaunchQueue launch_queue(median_launch_us());
    const auto wait = [&](const HostCall& call, double waited, double resume_at) {
      out_.wait_us += waited;
      if (forward_end_ && call.ts_us < *forward_end_) out_.forward_wait_us += waited;
      clocks.resume(call.tid, resume_at);
    };
    for (const HostCall& call : trace_.calls) {
      if (call.ts_us < begin_ || call.ts_us > end_) continue;
      const GpuEvent* gpu = nullptr;
      if (call.correlation >= 0) {
        auto it = gpu_by_correlation_.find(call.correlation);
        if (it != gpu_by_correlation_.end() && !seen_correlation[call.correlation]) gpu = it->second;
      }
      if (gpu == nullptr && !call.is_sync()) continue;
      double queue_wait = 0;
      if (gpu != nullptr) {
        seen_correlation[call.correlation] = true;
        gpu_busy_until = std::max(gpu_busy_until, gpu->ts_us + gpu->dur_us);
        queue_wait = launch_queue.wait(call, *gpu);
      }
      if (!clocks.started() && main_tid_ >= 0) out_.first_launch_us = call.ts_us - begin_;
      TracedItem item;
      item.host_us = clocks.before(call);
      const bool blocking_copy = gpu != nullptr && gpu->device_to_host && gpu->pageable;
      if (gpu != nullptr) {
        item.gpu = *gpu;
        if (auto op = cpu_by_external_.find(gpu->external_id); op != cpu_by_external_.end()) {
          item.cpu_op = op->second->name;
          item.inputs = op->second->inputs;
          item.input_types = op->second->input_types;
        }
        out_.gpu_us += gpu->dur_us;
      }
      // A blocking call is blocked while the GPU still runs what was launched before it; the rest of the call
      // (the driver's round trip once the GPU has drained: 4 us a sync in a host-bound loop) is host work,
      // which a faster or slower host does faster or slower.
      const bool blocks = call.is_sync() || blocking_copy;
      const double blocked = blocks ? std::clamp(gpu_busy_until - call.ts_us, 0.0, call.dur_us) : 0.0;
      const double own_cost = blocks ? call.dur_us - blocked : 0.0;
      if (gpu == nullptr) {
        item.kind = TracedItem::Kind::SYNC;
        item.wait_us = blocked;
        item.host_us += own_cost;
      }
      if (blocks) {
        wait(call, blocked, call.ts_us + call.dur_us);
      } else if (queue_wait > 0) {  // the rest of the call is host work, the next item's
        wait(call, queue_wait, call.ts_us + queue_wait);
        ++out_.full_queue_launches;
        out_.full_queue_wait_us += queue_wait;
      }
      const auto [target, qk_norm] = owner(call);
      item.qk_norm = qk_norm;
      if (target == nullptr) {
        add_unattributed(item, gpu, blocking_copy ? own_cost : 0.0);
        continue;
      }
      auto& first = first_of_pass[target->backward ? 1 : 0];
      if (!first) first = ItemAt{static_cast<std::size_t>(target - out_.calls.data()), target->items.size()};
      target->items.push_back(item);
      if (blocking_copy) {
        TracedItem copy_wait;
        copy_wait.kind = TracedItem::Kind::SYNC;
        copy_wait.wait_us = blocked;
        copy_wait.host_us = own_cost;
        target->items.push_back(copy_wait);
      }
    }
    add_step_tail(clocks, first_of_pass[out_.has_backward ? 1 : 0]);
    for (auto& [name, u] : unattributed_) out_.unattributed.push_back(u);
    std::sort(out_.unattributed.begin(), out_.unattributed.end(),
              [](const UnattributedKernels& a, const UnattributedKernels& b) { return a.gpu_us > b.gpu_us; });
    if (out_.calls.empty())
      throw ConfigError(
          trace_.file, "",
          "no GPU launch could be attributed to an op: trace the model with "
          "torch.profiler.profile(with_stack=True) so that its module calls show, or add "
          "record_function ranges moesim.L<layer>.<op> (kernels/torch_stacks/README.md, Traces)");
    return std::move(out_);
  }

 private:
  struct ItemAt {
    std::size_t call = 0, item = 0;
  };

  // The step's host time after its last launch (autograd's engine finishing, the step returning) is the
  // last pass's too: the first item of that pass carries it, as the first forward item carries the time
  // before the step's first launch, so a learned profile's host work adds up to the step's.
  void add_step_tail(const HostClocks& clocks, const std::optional<ItemAt>& first) {
    if (main_tid_ < 0 || !clocks.started() || !first) return;
    const double last = clocks.latest(begin_);
    if (end_ > last) out_.calls[first->call].items[first->item].host_us += end_ - last;
  }

  // The step's median launch call (0: none).
  double median_launch_us() const {
    std::vector<double> durations;
    for (const HostCall& call : trace_.calls)
      if (call.ts_us >= begin_ && call.ts_us <= end_ && gpu_by_correlation_.count(call.correlation))
        durations.push_back(call.dur_us);
    return durations.empty() ? 0.0 : median(std::move(durations));
  }

  // An item no op claims: its host time (and `own_cost`, a blocking copy's beyond its wait), and its kernel
  // by name or the sync.
  void add_unattributed(const TracedItem& item, const GpuEvent* gpu, double own_cost) {
    out_.unattributed_host_us += item.host_us + own_cost;
    if (gpu == nullptr) {
      ++out_.unattributed_syncs;
      return;
    }
    UnattributedKernels& u = unattributed_[gpu->name];
    u.name = gpu->name;
    ++u.count;
    u.gpu_us += gpu->dur_us;
  }

  // The call that owns `call`'s item (nullptr: none), and whether the range that decided it is a qk_norm one.
  std::pair<OpCall*, bool> owner(const HostCall& call) {
    if (const LayerRange* r = innermost(ranges_, call.tid, call.ts_us))
      return {&op_call(r->layer, r->op, false), r->qk_norm};
    auto nodes = nodes_.find(call.tid);
    const CpuOp* node = nodes == nodes_.end() ? nullptr : nodes->second.innermost_with_sequence(call.ts_us);
    if (node == nullptr) {
      const LayerRange* gap = innermost(gaps_, call.tid, call.ts_us);
      return {gap != nullptr ? &op_call(gap->layer, gap->op, false) : nullptr, false};
    }
    auto it = forward_of_sequence_.find(*node->sequence);
    if (it == forward_of_sequence_.end()) return {nullptr, false};
    out_.has_backward = true;
    return {&op_call(it->second->layer, it->second->op, true), it->second->qk_norm};
  }

  // The forward's host time outside every layer range, on the step's thread: before the first range the
  // model prepares its layers' inputs (model_inputs), between ranges it adds sub-blocks to the residual
  // stream (residual_add of the layer before), after the last it runs its final norm (final_norm; without a
  // range of its own, the last layer's residual add falls there too). A gap after a model_inputs or
  // final_norm range of the trace's own belongs to that op.
  void add_forward_gaps() {
    if (!forward_begin_ || !forward_end_) return;
    std::vector<const LayerRange*> top;
    for (const LayerRange& r : ranges_) {
      if (r.range->tid != main_tid_ || r.range->ts_us < *forward_begin_ || r.range->end_us() > *forward_end_)
        continue;
      if (!top.empty() && r.range->ts_us < top.back()->range->end_us()) continue;  // nested in the last one
      top.push_back(&r);
    }
    if (top.empty()) return;
    auto gap = [&](double from, double to, int layer, const std::string& op) {
      if (to <= from) return;
      gap_ranges_.push_back(Range{"moesim.gap." + op, main_tid_, from, to - from});
      gaps_.push_back(LayerRange{&gap_ranges_.back(), layer, op});
    };
    // After a model-level range of the trace's own, its op goes on.
    auto after = [](const LayerRange& r, const char* otherwise) {
      return r.op == "model_inputs" || r.op == "final_norm" ? r.op : std::string(otherwise);
    };
    gap(*forward_begin_, top.front()->range->ts_us, top.front()->layer, "model_inputs");
    for (std::size_t i = 1; i < top.size(); ++i)
      gap(top[i - 1]->range->end_us(), top[i]->range->ts_us, top[i - 1]->layer,
          after(*top[i - 1], "residual_add"));
    gap(top.back()->range->end_us(), *forward_end_, top.back()->layer, after(*top.back(), "final_norm"));
  }

  OpCall& op_call(int layer, const std::string& op, bool backward) {
    const std::string key = std::to_string(layer) + "." + op + (backward ? ".bwd" : "");
    auto [it, fresh] = call_index_.try_emplace(key, out_.calls.size());
    if (fresh) out_.calls.push_back({layer, op, backward, {}});
    return out_.calls[it->second];
  }

  const TorchTrace& trace_;
  std::vector<Range> module_ranges_;  // the ops' ranges read from the module hierarchy (no moesim ranges)
  double begin_ = 0, end_ = 0;
  std::optional<double> forward_begin_, forward_end_;  // the step's moesim.forward range
  std::int64_t main_tid_ = -1;
  std::vector<LayerRange> ranges_;
  std::deque<Range> gap_ranges_;             // stable addresses for gaps_
  std::vector<LayerRange> gaps_;             // the forward's stretches outside every top-level layer range
  std::map<std::int64_t, NodeIndex> nodes_;  // autograd nodes per thread
  std::map<std::int64_t, const LayerRange*> forward_of_sequence_;
  std::map<std::int64_t, const GpuEvent*> gpu_by_correlation_;
  std::map<std::int64_t, const CpuOp*> cpu_by_external_;
  std::map<std::string, std::size_t> call_index_;
  std::map<std::string, UnattributedKernels> unattributed_;
  AttributedStep out_;
};

}  // namespace

std::optional<std::string> moesim_op_of_range(const std::string& name) {
  if (name == "attention") return "attn_core";
  if (name == kQkNormRange) return "attn_qkv";
  if (name == "moe") return "unpermute";
  if (name == "dispatch_wait") return "dispatch";
  if (name == "combine_wait") return "combine";
  for (const char* op : kOpNames)
    if (name == op) return name;
  return std::nullopt;
}

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

const OpCall* AttributedStep::find(int layer, const std::string& op, bool backward) const {
  for (const OpCall& c : calls)
    if (c.layer == layer && c.op == op && c.backward == backward) return &c;
  return nullptr;
}

double AttributedStep::unattributed_gpu_us() const {
  double sum = 0;
  for (const UnattributedKernels& u : unattributed) sum += u.gpu_us;
  return sum;
}

AttributedStep attribute_step(const TorchTrace& trace) {
  return Attributor(trace).run();
}

}  // namespace moesim::traces
