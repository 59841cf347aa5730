#include "moesim/traces/ModuleRanges.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "TextMatch.hpp"

namespace moesim::traces {
namespace {

using detail::contains_any;
using detail::lowered;

// What a module's class name says it is, read once per call.
struct ModuleClass {
  bool linear = false, norm = false, attention = false, token_mixer = false;
  bool shared = false, routed_experts = false, router = false, mlp_like = false;
};

ModuleClass classify(const std::string& type) {
  const std::string t = lowered(type);
  ModuleClass c;
  // nn.Linear and its kin: transformers' Conv1D, Megatron's and TE's parallel linears (a TE linear with a
  // fused input norm is still the projection).
  c.linear = type == "Linear" || type == "Conv1D" ||
             (type.size() > 6 && type.compare(type.size() - 6, 6, "Linear") == 0);
  c.norm = !c.linear && t.find("norm") != std::string::npos;
  c.attention = !c.linear && !c.norm && contains_any(t, {"attention", "attn"});
  // A layer's token mixer: attention, or what hybrid models mix tokens with instead (Qwen3-Next's gated
  // DeltaNet, Mamba layers and mixers, short convolutions): moesim's attention op either way.
  c.token_mixer = c.attention ||
                  (!c.linear && !c.norm &&
                   contains_any(t, {"mamba", "deltanet", "mixer", "ssm", "shortconv", "rwkv", "retention"}));
  c.shared = t.find("shared") != std::string::npos;
  c.routed_experts = !c.shared && t.find("expert") != std::string::npos;
  c.router = !c.shared && contains_any(t, {"router", "gate", "gating", "topk"});
  c.mlp_like = !c.linear && contains_any(t, {"mlp", "ffn", "feedforward", "feed_forward", "expert"});
  return c;
}

// Module calls nested by time on each thread: a call's children are the calls directly inside it.
class CallTree {
 public:
  explicit CallTree(const std::vector<ModuleCall>& calls) {
    std::vector<std::size_t> order(calls.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // by thread, then start, the longer call first at one start (it holds the other)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const ModuleCall &x = calls[a], &y = calls[b];
      if (x.tid != y.tid) return x.tid < y.tid;
      return x.ts_us != y.ts_us ? x.ts_us < y.ts_us : x.dur_us > y.dur_us;
    });
    children_.resize(calls.size());
    std::vector<std::size_t> open;
    for (std::size_t i : order) {
      const ModuleCall& c = calls[i];
      // a call that starts before the open one ends is inside it (the tracer's calls nest)
      while (!open.empty() && (calls[open.back()].tid != c.tid || calls[open.back()].end_us() <= c.ts_us))
        open.pop_back();
      (open.empty() ? roots_ : children_[open.back()]).push_back(i);
      open.push_back(i);
    }
  }
  const std::vector<std::size_t>& roots() const { return roots_; }
  const std::vector<std::size_t>& children(std::size_t i) const { return children_[i]; }

 private:
  std::vector<std::size_t> roots_;
  std::vector<std::vector<std::size_t>> children_;  // each in order of start
};

struct Layer {
  std::size_t call = 0;
  std::size_t attention = 0;  // position among the layer's children
  std::size_t mlp = 0;
};

class RangeBuilder {
 public:
  explicit RangeBuilder(const TorchTrace& trace) : trace_(trace), calls_(trace.modules), tree_(calls_) {
    kinds_.reserve(calls_.size());
    for (const ModuleCall& c : calls_) kinds_.push_back(classify(c.type));
  }

  std::vector<Range> build() {
    std::optional<Range> window;
    for (const Range& r : trace_.ranges)
      if (r.name.rfind("ProfilerStep#", 0) == 0) window = r;
    std::vector<std::size_t> parents;  // the call holding each layer found (npos: a layer at the top)
    std::vector<Layer> layers;
    for (std::size_t root : tree_.roots()) find_layers(root, kNone, window, layers, parents);
    if (layers.empty()) return {};
    // The forward runs on the step's thread (the profiler step's, else the first layer's): layers called on
    // another (recomputed in autograd's backward) are not the forward's. Of its forwards, the last one's.
    std::int64_t tid = calls_[layers.front().call].tid;
    double first_ts = calls_[layers.front().call].ts_us;
    for (const Layer& l : layers)
      if (calls_[l.call].ts_us < first_ts)
        std::tie(tid, first_ts) = std::pair{calls_[l.call].tid, calls_[l.call].ts_us};
    if (window) tid = window->tid;
    std::optional<std::size_t> parent, first_parent;
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (calls_[layers[i].call].tid == tid) {
        if (!first_parent) first_parent = parents[i];
        parent = parents[i];
      }
    if (!parent) return {};
    std::vector<Layer> forward;
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (parents[i] == *parent && calls_[layers[i].call].tid == tid) forward.push_back(layers[i]);
    return build_ranges(forward, *parent, *parent == *first_parent, window);
  }

 private:
  std::vector<Range> build_ranges(const std::vector<Layer>& forward, std::size_t parent, bool one_forward,
                                  const std::optional<Range>& window) {
    const ModuleCall& first = calls_[forward.front().call];
    const ModuleCall& last = calls_[forward.back().call];
    const double forward_begin = parent == kNone ? first.ts_us : calls_[parent].ts_us;
    const double forward_end = parent == kNone ? last.end_us() : calls_[parent].end_us();
    tid_ = first.tid;
    double step_begin = forward_begin, step_end = trace_end();
    if (window && window->ts_us <= forward_begin && window->end_us() >= forward_end) {
      step_begin = one_forward ? window->ts_us : forward_begin;
      step_end = window->end_us();
    }
    add("moesim.step", step_begin, step_end);
    add("moesim.forward", forward_begin, forward_end);
    for (std::size_t i = 0; i < forward.size(); ++i) add_layer(static_cast<int>(i), forward[i]);
    if (parent != kNone)
      for (std::size_t c : tree_.children(parent))
        if (calls_[c].ts_us >= last.end_us() && kinds_[c].norm)
          add_op(static_cast<int>(forward.size()) - 1, "final_norm", c);
    std::stable_sort(out_.begin(), out_.end(), [](const Range& a, const Range& b) {
      return a.ts_us != b.ts_us ? a.ts_us < b.ts_us : a.dur_us > b.dur_us;
    });
    return std::move(out_);
  }

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  void find_layers(std::size_t call, std::size_t parent, const std::optional<Range>& window,
                   std::vector<Layer>& layers, std::vector<std::size_t>& parents) const {
    const ModuleCall& c = calls_[call];
    if (window && (c.end_us() < window->ts_us || c.ts_us > window->end_us())) return;
    if (auto layer = as_layer(call)) {
      layers.push_back(*layer);
      parents.push_back(parent);
      return;
    }
    for (std::size_t child : tree_.children(call)) find_layers(child, call, window, layers, parents);
  }

  // A decoder layer: a token mixer child, then children that are neither norms nor mixers: the longest of
  // them is its MLP (Megatron's layers call identity modules where a norm is configured away).
  std::optional<Layer> as_layer(std::size_t call) const {
    const auto& kids = tree_.children(call);
    for (std::size_t a = 0; a < kids.size(); ++a) {
      if (!kinds_[kids[a]].token_mixer) continue;
      std::optional<std::size_t> mlp;
      for (std::size_t m = a + 1; m < kids.size(); ++m) {
        const ModuleClass& k = kinds_[kids[m]];
        if (!k.norm && !k.token_mixer && (!mlp || calls_[kids[m]].dur_us > calls_[kids[*mlp]].dur_us))
          mlp = m;
      }
      if (!mlp) return std::nullopt;
      return Layer{call, a, *mlp};
    }
    return std::nullopt;
  }

  void add_layer(int layer, const Layer& l) {
    const auto& kids = tree_.children(l.call);
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (i == l.attention) {
        add_attention(layer, kids[i]);
      } else if (i == l.mlp) {
        add_mlp(layer, kids[i]);
      } else if (kinds_[kids[i]].norm) {
        add_op(layer, i < l.attention ? "attn_norm" : "mlp_norm", kids[i]);
      }
    }
  }

  void add_attention(int layer, std::size_t call) {
    add_op(layer, "attention", call);
    std::vector<std::size_t> linears;
    for (std::size_t c : tree_.children(call))
      if (kinds_[c].linear) linears.push_back(c);
    if (linears.empty()) return;
    add_op(layer, "attn_out", linears.back());
    linears.pop_back();
    bool reads_input = true;  // every projection reads what the first does: the layer's normed input
    const auto width = linears.empty() ? std::nullopt : input_width(calls_[linears.front()]);
    for (std::size_t c : linears) {
      add_op(layer, "attn_qkv", c);
      const auto w = input_width(calls_[c]);
      if (width && w && *w != *width) reads_input = false;
    }
    if (!reads_input || !kinds_[call].attention) return;
    for (std::size_t c : tree_.children(call))
      if (kinds_[c].norm) add_op(layer, "qk_norm", c);
  }

  void add_mlp(int layer, std::size_t call) {
    const auto& kids = tree_.children(call);
    std::vector<std::size_t> routed, gate, shared;
    for (std::size_t c : kids)
      if (kinds_[c].routed_experts) routed.push_back(c);
    if (routed.empty()) {  // experts as a list of MLPs called in a loop, else one grouped MLP
      std::map<std::string, std::vector<std::size_t>> by_type;
      for (std::size_t c : kids)
        if (kinds_[c].mlp_like && !kinds_[c].shared) by_type[calls_[c].type].push_back(c);
      for (const auto& [type, list] : by_type)
        if (list.size() >= 2 && list.size() > routed.size()) routed = list;
      if (routed.empty())
        for (std::size_t c : kids)
          if (kinds_[c].mlp_like && !kinds_[c].shared) {
            routed.push_back(c);
            break;
          }
    }
    for (std::size_t c : kids)
      if (kinds_[c].router && std::find(routed.begin(), routed.end(), c) == routed.end()) gate.push_back(c);
    if (gate.empty() && routed.empty()) {  // a dense MLP: its first linear is a gate projection, not a router
      add_op(layer, "dense_ffn", call);
      return;
    }
    if (gate.empty() && kinds_[kids.front()].linear &&
        calls_[kids.front()].ts_us < calls_[routed.front()].ts_us)
      gate.push_back(kids.front());
    for (std::size_t c : kids)
      if ((kinds_[c].shared || kinds_[c].mlp_like) &&
          std::find(routed.begin(), routed.end(), c) == routed.end() &&
          std::find(gate.begin(), gate.end(), c) == gate.end())
        shared.push_back(c);
    add_op(layer, "moe", call);
    for (std::size_t c : gate) add_op(layer, "gate", c);
    for (std::size_t c : routed) add_op(layer, "routed_experts", c);
    for (std::size_t c : shared) add_op(layer, "shared_experts", c);
  }

  // The last dim of the first input of the first matrix multiply the call issues (record_shapes).
  std::optional<std::int64_t> input_width(const ModuleCall& call) const {
    const auto& ops = trace_.cpu_ops;
    auto it = std::lower_bound(ops.begin(), ops.end(), call.ts_us,
                               [](const CpuOp& op, double t) { return op.ts_us < t; });
    for (; it != ops.end() && it->ts_us <= call.end_us(); ++it) {
      if (it->tid != call.tid) continue;
      if (it->name != "aten::linear" && it->name != "aten::addmm" && it->name != "aten::mm" &&
          it->name != "aten::matmul")
        continue;
      if (it->inputs.empty() || it->inputs.front().empty()) return std::nullopt;
      return it->inputs.front().back();
    }
    return std::nullopt;
  }

  double trace_end() const {
    double end = 0;
    for (const HostCall& c : trace_.calls) end = std::max(end, c.ts_us + c.dur_us);
    for (const CpuOp& op : trace_.cpu_ops) end = std::max(end, op.ts_us + op.dur_us);
    return end;
  }

  void add(const std::string& name, double begin, double end) {
    out_.push_back(Range{name, tid_, begin, end - begin});
  }
  void add_op(int layer, const std::string& op, std::size_t call) {
    const ModuleCall& c = calls_[call];
    out_.push_back(Range{"moesim.L" + std::to_string(layer) + "." + op, c.tid, c.ts_us, c.dur_us});
  }

  const TorchTrace& trace_;
  const std::vector<ModuleCall>& calls_;
  std::vector<ModuleClass> kinds_;  // of each call
  CallTree tree_;
  std::int64_t tid_ = 0;
  std::vector<Range> out_;
};

}  // namespace

std::vector<Range> op_ranges_from_modules(const TorchTrace& trace) {
  if (trace.modules.empty()) return {};
  return RangeBuilder(trace).build();
}

}  // namespace moesim::traces
