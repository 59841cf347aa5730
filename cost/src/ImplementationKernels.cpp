#include "ImplementationKernels.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "moesim/common/Check.hpp"
#include "moesim/cost/GroupedGemm.hpp"
#include "moesim/cost/ImplementationQuantities.hpp"

namespace moesim::cost {

std::vector<std::int64_t> implementation_expert_rows(const models::OpContext& c) {
  if (!c.expert_tokens.empty()) return c.expert_tokens;
  // routed_rows spread evenly, as models::layer_op_kernels does.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(c.experts_total_local), 0);
  for (std::int64_t e = 0; e < c.experts_total_local; ++e)
    rows[static_cast<std::size_t>(e)] =
        c.routed_rows / c.experts_total_local + (e < c.routed_rows % c.experts_total_local);
  return rows;
}

double implementation_rows(const models::OpContext& c, ImplRows rows, std::int64_t expert_rows) {
  switch (rows) {
    case ImplRows::NONE:
      return 1;
    case ImplRows::TOKENS:
      return static_cast<double>(c.tokens);
    case ImplRows::ROUTED_ROWS:
      return static_cast<double>(c.routed_rows);
    case ImplRows::RECEIVED_ROWS: {
      const auto r = implementation_expert_rows(c);
      return static_cast<double>(std::accumulate(r.begin(), r.end(), std::int64_t{0}));
    }
    case ImplRows::EXPERT_ROWS:
      return static_cast<double>(expert_rows);
  }
  return 1;
}

namespace {
double local_experts(const models::OpContext& c) {
  return static_cast<double>(c.expert_tokens.empty() ? c.experts_total_local : c.expert_tokens.size());
}
}  // namespace

double implementation_width(const models::ModelSpec& m, const models::OpContext& c, ImplWidth width) {
  const models::AttentionSpec& a = m.attention;
  const double tp = std::max(c.tp, 1);
  const double heads = a.heads / tp;
  switch (width) {
    case ImplWidth::ONE:
      return 1;
    case ImplWidth::HIDDEN:
      return m.hidden;
    case ImplWidth::EXPERTS:
      return m.moe.experts;
    case ImplWidth::LOCAL_EXPERTS:
      return local_experts(c);
    case ImplWidth::TOP_K:
      return m.moe.top_k;
    case ImplWidth::EXPERT_FFN:
      return m.moe.expert_ffn;
    case ImplWidth::SHARED_FFN:
      return static_cast<double>(m.moe.shared_experts) * m.moe.shared_ffn;
    case ImplWidth::DENSE_FFN:
      return m.dense_ffn;
    case ImplWidth::Q_WIDTH:
      return heads * a.qk_head_dim();
    case ImplWidth::KV_WIDTH:
      return a.type == models::AttentionType::MLA ? a.kv_lora_rank + a.rope_head_dim
                                                  : std::ceil(a.kv_heads / tp) * a.head_dim;
    case ImplWidth::V_WIDTH:
      return heads * a.value_head_dim();
    case ImplWidth::HEADS:
      return heads;
    case ImplWidth::EXPERT_WEIGHTS:
      return local_experts(c) * m.moe.expert_ffn * m.hidden;
    case ImplWidth::EXPERT_WEIGHT:
      return static_cast<double>(m.moe.expert_ffn) * m.hidden;
    case ImplWidth::Q_ROPE:
      return a.type == models::AttentionType::MLA ? heads * a.rope_head_dim
                                                  : implementation_width(m, c, ImplWidth::Q_WIDTH);
    case ImplWidth::K_ROPE:
      return a.type == models::AttentionType::MLA ? a.rope_head_dim
                                                  : implementation_width(m, c, ImplWidth::KV_WIDTH);
  }
  return 1;
}

std::vector<models::KernelCost> implementation_moesim_kernels(const models::ModelSpec& model,
                                                              models::LayerOp op, models::Pass pass,
                                                              const models::OpContext& context,
                                                              std::optional<std::int64_t> one_expert_rows) {
  models::OpContext c = context;
  c.regroup_by_expert = false;
  if (op == models::LayerOp::ROUTED_EXPERTS) {
    c.expert_loop = one_expert_rows.has_value();
    if (one_expert_rows) {
      c.expert_tokens = {*one_expert_rows};
      c.experts_total_local = 1;
    }
  }
  if (pass == models::Pass::FORWARD) return models::layer_op_kernels(model, op, models::Pass::FORWARD, c);
  std::vector<models::KernelCost> all = models::layer_op_kernels(model, op, models::Pass::DGRAD, c);
  for (models::KernelCost& k : models::layer_op_kernels(model, op, models::Pass::WGRAD, c))
    all.push_back(std::move(k));
  return all;
}

}  // namespace moesim::cost

namespace moesim::cost::detail {
namespace {

using models::KernelClass;
using models::KernelCost;
using models::LayerOp;
using models::Pass;

class StepEmitter {
 public:
  StepEmitter(const OpCostInputs& in, LayerOp op, Pass pass, const models::OpContext& c)
      : in_(in),
        op_(op),
        pass_(pass),
        c_(c),
        rows_(op == LayerOp::ROUTED_EXPERTS ? implementation_expert_rows(c) : std::vector<std::int64_t>{}) {}

  std::vector<KernelPiece> emit(const ImplOpEntry& entry) {
    const auto& steps = entry.steps;
    for (std::size_t i = 0; i < steps.size();) {
      if (steps[i].repeat == ImplRepeat::ONCE) {
        step(steps[i++], 0);
        continue;
      }
      std::size_t end = i;
      while (end < steps.size() && steps[end].repeat == ImplRepeat::PER_EXPERT) ++end;
      for (std::int64_t rows : rows_) {
        if (rows <= 0) continue;
        for (std::size_t k = i; k < end; ++k) step(steps[k], rows);
      }
      i = end;
    }
    return std::move(pieces_);
  }

 private:
  std::string name(const ImplStep& s) const {
    return models::to_string(op_) + "." + (s.label.empty() ? to_string(s.kind) : s.label) +
           (pass_ == Pass::FORWARD ? "" : ".bwd");
  }

  // moesim's kernels of the op for this pass, for one expert of `rows` rows when rows > 0, else with the
  // routed experts as one grouped launch per projection.
  std::vector<KernelCost> moesim_kernels(std::int64_t rows) const {
    return implementation_moesim_kernels(in_.model, op_, pass_, c_,
                                         rows > 0 ? std::optional<std::int64_t>(rows) : std::nullopt);
  }

  // Chunks of the EP exchange: one per (source rank, local expert).
  double host_ns(const ImplStep& s) const {
    return s.host_ns + s.host_ns_per_chunk * std::max(in_.ep, 1) * local_experts(c_);
  }

  void kernel(const std::string& name, const sim::KernelWork& work, const ImplStep& s, double flops) {
    pieces_.push_back({name, work, host_ns(s), flops, PieceKind::KERNEL});
  }

  void gemms(const ImplStep& s, std::int64_t rows) {
    const std::string prefix = models::to_string(op_) + ".";
    for (const KernelCost& k : moesim_kernels(rows)) {
      if (k.kind != KernelClass::GEMM && k.kind != KernelClass::GROUPED_GEMM) continue;
      if (s.gemm != "*" && k.name != prefix + s.gemm) continue;
      sim::KernelWork w = s.grouped && k.kind == KernelClass::GROUPED_GEMM
                              ? grouped_gemm_work(in_.hw, k, c_.dtype, rows_, *s.grouped)
                              : kernel_work(in_.hw, k, c_.dtype);
      w.compute_ns /= s.efficiency;
      w.memory_ns /= s.efficiency;
      if (s.kernel_overhead_ns >= 0) {
        w.fixed_ns += s.kernel_overhead_ns;
      } else {
        // Faster than the table at the traced shape: the table's time shrinks, never below an empty kernel's.
        w.compute_ns = std::max(0.0, w.compute_ns + s.kernel_overhead_ns);
        w.memory_ns = std::max(0.0, w.memory_ns + s.kernel_overhead_ns);
      }
      kernel(k.name, w, s, k.flops);
    }
  }

  void attention(const ImplStep& s) {
    for (const KernelCost& k : moesim_kernels(0)) {
      if (k.kind != KernelClass::ATTENTION) continue;
      sim::KernelWork w = kernel_work(in_.hw, k, c_.dtype, in_.attention);
      w.compute_ns *= s.time_factor;
      w.memory_ns *= s.time_factor;
      kernel(k.name, w, s, k.flops);
    }
  }

  void step(const ImplStep& s, std::int64_t expert) {
    if (s.when == ImplCondition::MULTI_RANK && in_.ep <= 1) return;
    if (s.when == ImplCondition::SINGLE_RANK && in_.ep > 1) return;
    if (s.when == ImplCondition::QK_NORM && !in_.model.attention.qk_norm) return;
    if (s.when == ImplCondition::SHARED_GATE && !in_.model.moe.shared_gate) return;
    switch (s.kind) {
      case ImplStepKind::GEMM:
        gemms(s, expert);
        return;
      case ImplStepKind::ATTENTION:
        attention(s);
        return;
      case ImplStepKind::MEMORY: {
        KernelCost k;
        k.name = name(s);
        k.kind = KernelClass::MEMORY;
        k.backward = pass_ != Pass::FORWARD;
        const double elements =
            implementation_rows(c_, s.rows, expert) * implementation_width(in_.model, c_, s.width);
        k.bytes = s.bytes_per_element * elements;
        sim::KernelWork w = kernel_work(in_.hw, k, c_.dtype);
        if (s.steady_bytes > 0 && k.bytes > s.steady_bytes)
          w.memory_ns *= in_.hw.memory_efficiency(k.bytes) / in_.hw.memory_efficiency(s.steady_bytes);
        // A capped kernel is held back on its SMs, not by the HBM it shares: SM time, as a router's.
        if (s.max_bytes_per_s > 0) w.compute_ns = std::max(w.compute_ns, k.bytes / s.max_bytes_per_s * 1e9);
        // Atomic adds run at the GPU's rate for them whatever the bytes (bf16 only: the rate measured).
        const double atomic_rate = in_.hw.gpu.atomic_add_bf16_per_s;
        if (s.atomic_adds_per_element > 0 && atomic_rate > 0 && c_.dtype == models::DType::BF16) {
          w.compute_ns = std::max(w.compute_ns, s.atomic_adds_per_element * elements / atomic_rate * 1e9);
        }
        // Below its floor the kernel's time does not shrink with its bytes: the floor is start-up, not
        // traffic.
        w.fixed_ns = std::max(w.fixed_ns, s.floor_ns - std::max(w.compute_ns, w.memory_ns));
        kernel(k.name, w, s, 0);
        return;
      }
      case ImplStepKind::FIXED: {
        sim::KernelWork w;
        w.fixed_ns = std::max(s.time_ns, in_.hw.gpu.kernel_min_s * 1e9);  // no kernel is shorter
        kernel(name(s), w, s, 0);
        return;
      }
      case ImplStepKind::SYNC:
        pieces_.push_back({name(s), {}, host_ns(s), 0, PieceKind::HOST_SYNC});
        return;
    }
  }

  const OpCostInputs& in_;
  LayerOp op_;
  Pass pass_;
  const models::OpContext& c_;
  std::vector<std::int64_t> rows_;
  std::vector<KernelPiece> pieces_;
};

}  // namespace

std::vector<KernelPiece> implementation_kernels(const OpCostInputs& in, const ImplOpEntry& entry,
                                                models::LayerOp op, models::Pass pass,
                                                const models::OpContext& context) {
  MOE_CHECK(pass != models::Pass::WGRAD) << "backward entries are emitted with DGRAD";
  return StepEmitter(in, op, pass, context).emit(entry);
}

}  // namespace moesim::cost::detail
