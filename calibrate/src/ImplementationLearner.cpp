#include "moesim/calibrate/ImplementationLearner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "LaunchSequence.hpp"
#include "StepTemplates.hpp"
#include "UntracedForms.hpp"
#include "moesim/common/Check.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate {
namespace {

using cost::ImplRepeat;
using cost::ImplStep;
using cost::ImplStepKind;
using detail::ExpertLoop;
using detail::TracedQuantities;
using models::LayerOp;
using traces::GpuKind;
using traces::TracedItem;

constexpr double kMinEfficiency = 0.01, kMaxEfficiency = 100;
// A kernel within 10% of the profile's kernel_min is latency-bound: its traffic is read from its operands'
// shapes and types (4 bytes per element, a bf16 read and write, where a type is unknown) instead of its time.
constexpr double kLatencyBoundMargin = 1.1;
constexpr double kNominalBytesPerElement = 4;
// ... unless the memory curve says those bytes take over ten times the kernel's traced time: a clear
// refutation (4 bytes per element can overstate a kernel that only writes, or reduces to a few values, a few
// times over; cuBLAS's memsets and CUTLASS's grouped-GEMM setup are 25-100x off).
constexpr double kRefutedTrafficFactor = 10;
// PyTorch's elementwise kernels take a flat time at few rows: up to 256 rows of widths 768-1,408 (operands up
// to about 2 MB) 2.0-2.4 us on the contiguous path, 3.1-3.7 us on the generic one and 4.9-5.9 us for
// masked_fill on one H200, whose kernel_min is 1.31 us
// (data/calibration/2026-11-28-nvidia-h200-elementwise-floor); their bytes show only above. A kernel in that
// region (within 4x kernel_min, operands within 2 MiB) that took longer than its operands' bytes explain is
// at its floor: it keeps its time as its floor and scales with its operands' bytes, not with the bytes its
// time would move (Qwen3's 128-row silu_backward read as 77 bytes per element overstates Mixtral's 2,048-row
// one 13x).
constexpr double kFloorBoundFactor = 4;
constexpr double kFloorRegionBytes = 2 * 1024 * 1024;
// ... and one on PyTorch's generic elementwise path (a broadcast or strided operand:
// at::native::elementwise_kernel, unrolled_elementwise_kernel) streams those bytes no faster than that path
// does on H100 and H200 alike: 1.0-2.5 TB/s by op, median 1.6 (kernels/tools/torch_elementwise_paths.py, the
// shipped profiles' max_GB_per_s).
constexpr double kGenericPathBytesPerS = 1.6e12;

// A MoE layer's ops and the model's own around the layers (a trace without them learns that the stack runs
// none: an entry without steps).
const std::vector<LayerOp>& learned_ops() {
  static const std::vector<LayerOp> ops = {
      LayerOp::ATTN_NORM, LayerOp::ATTN_QKV,       LayerOp::ATTN_CORE,    LayerOp::ATTN_OUT,
      LayerOp::MLP_NORM,  LayerOp::GATE,           LayerOp::PERMUTE,      LayerOp::ROUTED_EXPERTS,
      LayerOp::UNPERMUTE, LayerOp::SHARED_EXPERTS, LayerOp::RESIDUAL_ADD, LayerOp::MODEL_INPUTS,
      LayerOp::FINAL_NORM};
  return ops;
}

std::string fixed(double v, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << v;
  return out.str();
}

class OpLearner {
 public:
  OpLearner(const hw::HwProfile& hw, LayerOp op, bool backward, TracedQuantities q, double host_scale, int ep)
      : hw_(hw), op_(op), backward_(backward), q_(std::move(q)), host_scale_(host_scale), ep_(ep) {}

  // Steps of one region of the call (all ONCE or all PER_EXPERT).
  void region(const std::vector<TracedItem>& items, ImplRepeat repeat) {
    q_.per_expert = repeat == ImplRepeat::PER_EXPERT;
    std::vector<std::size_t> gemm_items, attention_items;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind == TracedItem::Kind::LAUNCH && items[i].gpu.kind == GpuKind::GEMM)
        gemm_items.push_back(i);
      if (items[i].kind == TracedItem::Kind::LAUNCH && items[i].gpu.kind == GpuKind::ATTENTION &&
          op_ == LayerOp::ATTN_CORE)
        attention_items.push_back(i);
    }
    const auto gemms = detail::predicted_kernels(hw_, op_, backward_, q_, true);
    const bool one_for_one = gemms.size() == gemm_items.size();
    bool after_nccl = false;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const TracedItem& item = items[i];
      ImplStep step;
      step.repeat = repeat;
      step.host_ns = item.host_us * host_scale_ * 1e3;
      if (item.qk_norm) step.when = cost::ImplCondition::QK_NORM;
      if (item.kind == TracedItem::Kind::SYNC) {
        step.kind = ImplStepKind::SYNC;
        step.label = "sync";
        push(step, after_nccl);
        continue;
      }
      if (item.gpu.kind == GpuKind::GEMM && !gemms.empty()) {
        gemm_step(items, gemm_items, gemms, i, one_for_one, step, after_nccl);
        continue;
      }
      if (!attention_items.empty() && item.gpu.kind == GpuKind::ATTENTION) {
        attention_step(items, attention_items, i, step, after_nccl);
        continue;
      }
      if (item.gpu.kind == GpuKind::NCCL) {
        // The split-size exchange of EP > 1: a tiny all-to-all, timed as the profile's latency for one.
        after_nccl = ep_ > 1;
        step.kind = ImplStepKind::FIXED;
        step.label = "nccl";
        const double latency = ep_ > 1 ? hw_.collective_time_s(hw::CollectiveKind::ALL_TO_ALL, ep_,
                                                               hw::CollectiveScope::INTRA, 1024)
                                       : 0;
        step.time_ns = std::min(item.gpu.dur_us * 1e-6, latency > 0 ? latency : item.gpu.dur_us * 1e-6) * 1e9;
        push(step, after_nccl);
        continue;
      }
      memory_step(item, step);
      push(step, after_nccl);
    }
  }

  std::vector<ImplStep> take() { return std::move(steps_); }

 private:
  void push(ImplStep step, bool multi_rank_only) {
    if (multi_rank_only) step.when = cost::ImplCondition::MULTI_RANK;
    steps_.push_back(std::move(step));
  }

  std::string suffix_name(const models::KernelCost& k) const {
    return k.name.substr(models::to_string(op_).size() + 1);
  }

  // moesim's GEMMs of the region at the traced ones' places: one for one when the counts agree, else all of
  // them at the first traced GEMM; one efficiency for the region either way (orders need not agree).
  void gemm_step(const std::vector<TracedItem>& items, const std::vector<std::size_t>& gemm_items,
                 const std::vector<detail::PredictedKernel>& gemms, std::size_t i, bool one_for_one,
                 ImplStep step, bool after_nccl) {
    double traced = 0, fixed_ns = 0, variable = 0, host = 0;
    for (std::size_t g : gemm_items) {
      traced += items[g].gpu.dur_us * 1e3;
      host += items[g].host_us * host_scale_ * 1e3;
    }
    for (const auto& p : gemms) {
      fixed_ns += p.fixed_ns;
      variable += p.variable_ns;
    }
    step.kind = ImplStepKind::GEMM;
    step.efficiency = std::clamp(variable / std::max(traced - fixed_ns, 1.0), kMinEfficiency, kMaxEfficiency);
    // A loop's small per-expert GEMMs that run slower than the hardware profile's table pay a cost per
    // launch, not per FLOP: over every one-for-one GEMM of the committed traces, kernels the table puts under
    // 5 us ran 0.7 us (H100) and 1.6 us (H200) longer (median), those of 10-200 us at 0.9-1.0 of it. A rate
    // learned at Qwen3's 128-row experts would slow Mixtral's 512-row ones by the same factor; the excess per
    // launch carries over instead. So for grouped GEMMs: torch._grouped_mm ran 0.72-0.92 of the profile's
    // rate at 128-512 rows per expert and 0.95-1.01 at 768-8192 (2026-11-28 H200 traces, Qwen3,
    // DeepSeek-V2-Lite, Mixtral at EP 1/2/4). Whole-projection launches keep the rate: their shortfall scales
    // with them. Small GEMMs faster than the table are its error at their shape too, not the stack's rate:
    // the H200 eager experts' 128-row GEMMs ran 1.07-1.13x the table and Mixtral's 2,048-row ones
    // at 1.00-0.94x (2026-11-28 x1 Mixtral eager trace), so that deficit is learned per launch as well (a
    // negative overhead).
    const bool grouped = std::all_of(gemms.begin(), gemms.end(), [](const detail::PredictedKernel& p) {
      return p.cost.kind == models::KernelClass::GROUPED_GEMM;
    });
    if (step.repeat == ImplRepeat::PER_EXPERT || grouped) {
      step.efficiency = 1;
      step.kernel_overhead_ns = (traced - fixed_ns - variable) / static_cast<double>(gemms.size());
    }
    if (one_for_one) {
      const auto index =
          static_cast<std::size_t>(std::find(gemm_items.begin(), gemm_items.end(), i) - gemm_items.begin());
      step.gemm = suffix_name(gemms[index].cost);
      step.label = step.gemm;
      push(step, after_nccl);
      return;
    }
    if (i != gemm_items.front()) return;
    step.gemm = "*";
    step.label = "gemms";
    step.host_ns = host / static_cast<double>(gemms.size());
    push(step, after_nccl);
  }

  void attention_step(const std::vector<TracedItem>& items, const std::vector<std::size_t>& attention_items,
                      std::size_t i, ImplStep step, bool after_nccl) {
    if (i != attention_items.front()) return;
    const auto predicted = detail::predicted_kernels(hw_, op_, backward_, q_, false);
    double traced = 0, host = 0, fixed_ns = 0, variable = 0;
    for (std::size_t a : attention_items) {
      traced += items[a].gpu.dur_us * 1e3;
      host += items[a].host_us * host_scale_ * 1e3;
    }
    for (const auto& p : predicted) {
      fixed_ns += p.fixed_ns;
      variable += p.variable_ns;
    }
    step.kind = ImplStepKind::ATTENTION;
    step.label = "attention";
    step.time_factor = std::clamp(std::max(traced - fixed_ns, 1.0) / std::max(variable, 1.0), kMinEfficiency,
                                  kMaxEfficiency);
    step.host_ns = host;
    push(step, after_nccl);
  }

  void memory_step(const TracedItem& item, ImplStep& step) const {
    step.label = item.cpu_op.empty() ? traces::to_string(item.gpu.kind) : item.cpu_op;
    if (atomic_add_step(item, step)) return;
    const std::vector<std::int64_t> largest = detail::largest_input(item.inputs);
    const double elements = detail::element_count(largest);
    const auto shape = detail::traffic_shape(op_, q_, largest);
    const std::optional<Traffic> traffic = shape ? scaling_traffic(item, *shape, elements) : std::nullopt;
    if (!traffic) {
      step.kind = ImplStepKind::FIXED;
      step.time_ns = item.gpu.dur_us * 1e3;
      return;
    }
    step.kind = ImplStepKind::MEMORY;
    step.rows = shape->rows;
    step.width = shape->width;
    step.bytes_per_element = traffic->bytes / shape->elements;
    step.floor_ns = traffic->floor_ns;
    step.max_bytes_per_s = traffic->max_bytes_per_s;
    // Timed by its traffic: at more bytes it keeps the rate it ran at (ImplStep::steady_bytes says why).
    // A reduction keeps speeding up with its size: the memory curve's rise times it (detail::is_reduction).
    if (traffic->floor_ns == 0 && traffic->max_bytes_per_s == 0 && !detail::is_reduction(item.cpu_op))
      step.steady_bytes = traffic->bytes;
  }

  // A bf16 index_add_ or scatter_add_ (self, dim, index, source) adds each source element atomically: its
  // time scales with the source, at the GPU's atomic-add rate where the hardware profile has one. Read as
  // traffic at the traced size instead, Qwen3's 128-row per-expert index_add_ (at PyTorch's floor) had put
  // Mixtral's 2,048-row one at 16 us against 65 traced. False where it is no such op or nothing explains the
  // source.
  bool atomic_add_step(const TracedItem& item, ImplStep& step) const {
    static const std::set<std::string> ops = {"aten::index_add_", "aten::index_add", "aten::scatter_add_",
                                              "aten::scatter_add"};
    constexpr std::size_t kSource = 3;
    if (hw_.gpu.atomic_add_bf16_per_s <= 0 || !ops.count(item.cpu_op) || item.inputs.size() <= kSource ||
        item.input_types.size() <= kSource || item.input_types[kSource] != "c10::BFloat16" ||
        item.inputs[kSource].empty())
      return false;
    const double source = detail::element_count(item.inputs[kSource]);
    const auto shape = detail::traffic_shape(op_, q_, item.inputs[kSource]);
    const auto source_bytes = detail::tensor_bytes(item.inputs[kSource], item.input_types[kSource]);
    const auto index_bytes = detail::tensor_bytes(item.inputs[kSource - 1], item.input_types[kSource - 1]);
    if (!shape || !source_bytes || !index_bytes) return false;
    // The source and the index read once, and only the rows they add into read and written: not all of self.
    const double nominal = 3 * *source_bytes + *index_bytes;
    const double duration_s = item.gpu.dur_us * 1e-6;
    step.kind = ImplStepKind::MEMORY;
    step.rows = shape->rows;
    step.width = shape->width;
    step.bytes_per_element = nominal / shape->elements;
    step.atomic_adds_per_element = source / shape->elements;
    // At PyTorch's floor (a few hundred rows) neither its bytes nor its adds explain its time.
    if (duration_s <= hw_.gpu.kernel_min_s * kFloorBoundFactor && nominal <= kFloorRegionBytes &&
        duration_s > hw_.gpu.kernel_min_s)
      step.floor_ns = duration_s * 1e9;
    return true;
  }

  struct Traffic {
    double bytes = 0;
    double floor_ns = 0;  ///< the traced time, where that is the kernel's floor rather than its traffic's
    double max_bytes_per_s = 0;  ///< a floor-bound kernel's rate above its floor on the generic path
  };

  static bool generic_path(const std::string& kernel) {
    return kernel.find("native::elementwise_kernel<") != std::string::npos ||
           kernel.find("unrolled_elementwise_kernel") != std::string::npos;
  }

  // What a kernel moves if its time scales with its op's shape (`elements`: its largest input's); nullopt
  // where it keeps its traced time.
  std::optional<Traffic> scaling_traffic(const TracedItem& item, const detail::TrafficShape& shape,
                                         double elements) const {
    const double duration_s = item.gpu.dur_us * 1e-6;
    const double measured = detail::bytes_for_duration(hw_, duration_s);
    const bool latency_bound = duration_s <= hw_.gpu.kernel_min_s * kLatencyBoundMargin || measured <= 0;
    // A stacked expert weight has hundreds of millions of elements: a kernel launched with it that moves less
    // than a byte of each (CUTLASS's grouped-GEMM setup, which reads its shape) does not scale with it.
    if (shape.width == cost::ImplWidth::EXPERT_WEIGHTS && (latency_bound || measured < elements))
      return std::nullopt;
    // A copy or memset says what it moves: less than a byte per element of the op's shape (cuBLAS resets a
    // 4-byte flag before some GEMMs) does not scale with it.
    const auto said = static_cast<double>(item.gpu.bytes);
    if (item.gpu.bytes >= 0 && said < shape.elements) return std::nullopt;
    const double nominal = item.gpu.bytes >= 0 ? said
                                               : detail::operand_bytes(item.inputs, item.input_types)
                                                     .value_or(kNominalBytesPerElement * elements);
    const bool floor_bound = duration_s <= hw_.gpu.kernel_min_s * kFloorBoundFactor &&
                             nominal <= kFloorRegionBytes && measured > nominal;
    if (!latency_bound && !floor_bound) return Traffic{measured, 0};
    // Moving that much would have taken it far longer than it did (CUTLASS's grouped-GEMM setup, handed the
    // activations, reads only their shape): its time does not scale with that shape.
    if (nominal > detail::bytes_for_duration(hw_, duration_s * kRefutedTrafficFactor)) return std::nullopt;
    return Traffic{nominal, duration_s > hw_.gpu.kernel_min_s ? duration_s * 1e9 : 0,
                   generic_path(item.gpu.name) ? kGenericPathBytesPerS : 0};
  }

  const hw::HwProfile& hw_;
  LayerOp op_;
  bool backward_;
  TracedQuantities q_;
  double host_scale_;
  int ep_;
  std::vector<ImplStep> steps_;
};

TracedQuantities quantities(const TracedStack& s) {
  TracedQuantities q;
  q.model = &s.model;
  const auto& moe = s.model.moe;
  if (moe.experts % s.ep != 0)
    throw ConfigError(s.label, "",
                      "EP " + std::to_string(s.ep) + " does not divide the " + std::to_string(moe.experts) +
                          " experts of " + s.model.name);
  const int local = moe.experts / s.ep;
  // Balanced routing: every expert receives an equal share of all ranks' token-expert rows.
  q.expert_rows = s.tokens * moe.top_k * s.ep / moe.experts;
  q.context.tokens = s.tokens;
  q.context.seq_len = std::min(s.seq, s.tokens);
  q.context.routed_rows = s.tokens * moe.top_k;
  q.context.experts_total_local = local;
  q.context.expert_tokens.assign(static_cast<std::size_t>(local), q.expert_rows);
  return q;
}

// Host time the profiler adds: the untraced issue time over the traced one, blocked time taken out of both;
// per pass when the record says when the untraced forward returned.
traces::ProfilerHostScale host_scale(const TracedStack& s, std::vector<std::string>& notes) {
  const double host = s.step.host_us, wait = s.step.wait_us;
  const auto inflation = traces::profiler_host_scale(s.step, s.issue_ms, s.forward_issue_ms);
  if (!inflation) {
    // transformers' models on one H200 (data/torch-stacks/2026-11-29-nvidia-h200-x1-plain): the profiler
    // left 0.61-0.87 of a traced forward's host time to the untraced step with ranges, 0.40-0.51 with_stack
    notes.push_back(
        s.label + ": no untraced issue time: host costs as traced (the profiler's overhead included" +
        (s.step.ops_from_modules ? "; with_stack's Python tracer doubles a forward's host time: give "
                                   "--untraced-issue-ms and --untraced-forward-ms)"
                                 : ")"));
    return {};
  }
  notes.push_back(s.label + ": host time scaled by " +
                  (inflation->per_pass
                       ? fixed(inflation->forward, 3) + " forward, " + fixed(inflation->backward, 3) +
                             " backward (untraced forward issue " + fixed(s.forward_issue_ms, 2) +
                             " ms, traced " + fixed(s.step.forward_host_us * 1e-3, 2) + " ms; step "
                       : fixed(inflation->forward, 3) + " (") +
                  "untraced issue " + fixed(s.issue_ms, 2) + " ms, traced " + fixed(host * 1e-3, 2) +
                  " ms, blocked " + fixed(wait * 1e-3, 2) + " ms)");
  return *inflation;
}

// Returns whether the routed experts loop over the local experts; appends to `entry_ep` the EP degree of each
// entry it adds to p.ops.
bool learn_stack(const TracedStack& s, const hw::HwProfile& hw, cost::ImplementationProfile& p,
                 std::vector<int>& entry_ep, std::vector<std::string>& notes) {
  bool loops = false;
  if (s.step.ops_from_modules)
    notes.push_back(s.label + ": no moesim ranges: ops read from the module calls (with_stack), " +
                    std::to_string(s.step.layers) + " layers");
  if (!s.read_from_trace.empty()) notes.push_back(s.label + ": read from the trace: " + s.read_from_trace);
  const traces::ProfilerHostScale scale = host_scale(s, notes);
  const TracedQuantities q = quantities(s);
  std::map<std::string, std::vector<const traces::OpCall*>> by_key;
  for (const traces::OpCall& c : s.step.calls) by_key[c.op + (c.backward ? ".bwd" : "")].push_back(&c);
  // A profiler started for the traced step alone pays its start at the step's first launch (2.1-3.3 ms in
  // 2026-11-28's own-model traces, 0.1-0.6 ms in traces that profiled a warm-up step first).
  if (s.step.first_launch_us > 1000)
    notes.push_back(
        s.label + ": the step's first launch came " + fixed(s.step.first_launch_us * 1e-3, 2) +
        " ms after it began, all of it the first op's host time: if the profiler started for this "
        "step, profile a warm-up step first (torch.profiler.schedule(warmup=1); "
        "torch_stacks.annotate.profile_step does)");
  if (s.step.full_queue_launches > 0)
    notes.push_back(s.label + ": " + std::to_string(s.step.full_queue_launches) +
                    " launches waited for the GPU at a full launch queue, " +
                    fixed(s.step.full_queue_wait_us * 1e-3, 2) +
                    " ms in all: taken as waits, not host work (the host ran far ahead of its GPU)");
  if (!s.step.unattributed.empty()) {
    std::string top;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, s.step.unattributed.size()); ++i) {
      const auto& u = s.step.unattributed[i];
      top += (i ? "; " : "") + std::to_string(u.count) + "x " + u.name.substr(0, 60) + " " +
             fixed(u.gpu_us, 1) + " us";
    }
    notes.push_back(s.label + ": unattributed " + fixed(s.step.unattributed_gpu_us(), 1) +
                    " us of GPU time (" + top + "), " + std::to_string(s.step.unattributed_syncs) +
                    " syncs, " + fixed(s.step.unattributed_host_us * scale.forward * 1e-3, 2) +
                    " ms of host time before them: not in the profile (no op of moesim's layers runs them)");
  }
  for (bool backward : {false, true}) {
    if (backward && !s.step.has_backward) continue;
    const cost::ImplPass pass = backward ? cost::ImplPass::BACKWARD : cost::ImplPass::FORWARD;
    for (const char* comm : {"dispatch", "combine"}) {
      auto it = by_key.find(std::string(comm) + (backward ? ".bwd" : ""));
      const std::string name = std::string(comm) + (backward ? ".bwd" : "");
      if (it == by_key.end() || p.collective_host_ns.count(name)) continue;
      double host = 0;
      for (const traces::OpCall* c : it->second)
        for (const TracedItem& item : c->items) host += item.host_us;
      p.collective_host_ns[name] = host * scale.of(backward) * 1e3 / static_cast<double>(it->second.size());
    }
    // A dense layer's MLP where the trace ran one (a trace of MoE layers only leaves it to the base profile).
    std::vector<LayerOp> ops = learned_ops();
    if (by_key.count(std::string("dense_ffn") + (backward ? ".bwd" : ""))) ops.push_back(LayerOp::DENSE_FFN);
    for (LayerOp op : ops) {
      if (op == LayerOp::SHARED_EXPERTS && s.model.moe.shared_experts == 0) continue;
      if (backward && op == LayerOp::RESIDUAL_ADD) continue;  // moesim's backward has no residual op
      const std::optional<models::AttentionType> attention =
          op == LayerOp::ATTN_QKV || op == LayerOp::ATTN_CORE || op == LayerOp::ATTN_OUT
              ? std::optional(s.model.attention.type)
              : std::nullopt;
      if (p.find(op, pass, s.model.attention.type) != nullptr) continue;
      cost::ImplOpEntry entry;
      entry.op = op;
      entry.pass = pass;
      entry.attention = attention;
      auto it = by_key.find(models::to_string(op) + (backward ? ".bwd" : ""));
      if (it != by_key.end()) {
        const int per_layer = op == LayerOp::RESIDUAL_ADD ? 2 : 1;  // moesim adds twice per layer
        const std::vector<TracedItem> items = detail::representative(it->second, per_layer);
        OpLearner learner(hw, op, backward, q, scale.of(backward), s.ep);
        std::optional<ExpertLoop> loop;
        if (op == LayerOp::ROUTED_EXPERTS)
          loop = detail::find_expert_loop(items, q.context.expert_tokens.size());
        if (loop) {
          loops = true;
          std::vector<std::vector<TracedItem>> bodies;
          for (std::size_t e = 0; e < loop->repeats; ++e) {
            const auto first = items.begin() + static_cast<long>(loop->begin + e * loop->period);
            bodies.emplace_back(first, first + static_cast<long>(loop->period));
          }
          // The thinned iteration is one of the experts: the body runs once per expert in its place.
          learner.region(
              {items.begin(), items.begin() + static_cast<long>(loop->begin - loop->thinned_before)},
              ImplRepeat::ONCE);
          learner.region(detail::average(bodies), ImplRepeat::PER_EXPERT);
          learner.region({items.begin() + static_cast<long>(loop->end() + loop->thinned_after), items.end()},
                         ImplRepeat::ONCE);
          notes.push_back(s.label + ": " + models::to_string(op) + (backward ? " backward" : "") + ": " +
                          std::to_string(loop->period) + " launches per local expert (a loop over experts)");
        } else {
          learner.region(items, ImplRepeat::ONCE);
        }
        entry.steps = learner.take();
      }
      p.ops.push_back(std::move(entry));
      entry_ep.push_back(s.ep);
    }
  }
  return loops;
}

}  // namespace

LearnedImplementation learn_implementation(const std::vector<TracedStack>& stacks, const hw::HwProfile& hw,
                                           const std::string& name, const std::string& base) {
  MOE_CHECK(!stacks.empty()) << "learn_implementation needs a traced stack";
  LearnedImplementation out;
  cost::ImplementationProfile& p = out.profile;
  p.name = name;
  p.provenance.source = "learned";
  p.provenance.hw_profile = hw.name;
  p.host_cpu = stacks.front().cpu_model;
  p.host_probe_us = stacks.front().host_probe_us;
  p.provenance.description = "learned by moesim calibrate --torch-trace from " +
                             std::to_string(stacks.size()) + " trace(s) of " + stacks.front().model.name +
                             " (EP " + std::to_string(stacks.front().ep) + ", " +
                             std::to_string(stacks.front().tokens) + " tokens/rank)";
  if (std::any_of(stacks.begin(), stacks.end(), [](const TracedStack& s) { return s.step.ops_from_modules; }))
    p.provenance.description += "; ops read from the traces' module calls (no moesim ranges)";
  bool loops = false;
  std::vector<int> entry_ep;
  for (const TracedStack& s : stacks) {
    p.provenance.traces.push_back(s.label);
    loops = learn_stack(s, hw, p, entry_ep, out.notes) || loops;
  }
  const std::string base_name = !base.empty() ? base : loops ? "eager" : "grouped";
  if (base_name != "fused") {
    p.base = std::make_shared<const cost::ImplementationProfile>(cost::load_implementation(base_name));
    out.notes.push_back("ops the traces do not show come from the shipped profile " + base_name);
    detail::complete_for_other_ep(p, entry_ep, out.notes);
    std::vector<models::ModelSpec> traced;
    for (const TracedStack& s : stacks) traced.push_back(s.model);
    detail::add_untraced_feature_steps(p, traced, out.notes);
  }
  return out;
}

}  // namespace moesim::calibrate
