#include "Layers.hpp"

namespace moesim::schedules::detail {

namespace {
constexpr Pass FWD = Pass::FORWARD;

/** `norm_inputs`: activation tensors the attention norm sums into its input (FarSkip, as the runner does). */
void attention_forward(ProgramBuilder& b, int l, int norm_inputs = 0) {
  b.norm(l, LayerOp::ATTN_NORM, norm_inputs);
  for (LayerOp op : {LayerOp::ATTN_QKV, LayerOp::ATTN_CORE, LayerOp::ATTN_OUT}) b.compute(l, op, FWD);
}
}  // namespace

/*
 * Under attention TP with sequence parallelism (all-to-all MoE, --tp > 1; Megatron's layout) each rank holds
 * 1/tp of the tokens between blocks: a TP all-gather precedes the qkv projection (and a column-parallel
 * MLP), a reduce-scatter follows the output projection (the row-parallel GEMM). Backward swaps them. Without
 * TP these emit nothing.
 */
void attention_backward(ProgramBuilder& b, int l) {
  b.backward(l, LayerOp::ATTN_OUT, {b.sequence_gather(l, true, "attn")});
  for (LayerOp op : {LayerOp::ATTN_CORE, LayerOp::ATTN_QKV}) b.backward(l, op);
  b.backward(l, LayerOp::ATTN_NORM, {b.sequence_scatter(l, true, "attn")});
}

void tensor_parallel_mlp(ProgramBuilder& b, int l, LayerOp op) {
  b.compute(l, op, FWD, {b.sequence_gather(l, false, models::to_string(op))});
  b.wait(b.sequence_scatter(l, false, models::to_string(op)));
}

void tensor_parallel_mlp_backward(ProgramBuilder& b, int l, LayerOp op) {
  b.backward(l, op, {b.sequence_gather(l, true, models::to_string(op))});
  b.wait(b.sequence_scatter(l, true, models::to_string(op)));
}

// Router gradients complete the gradient of the MoE input.
void router_backward(ProgramBuilder& b, int l, OpId dispatch_grad) {
  b.backward(l, LayerOp::PERMUTE, {dispatch_grad});
  b.backward(l, LayerOp::GATE);
  b.backward(l, LayerOp::MLP_NORM);
}

/*
 * One MoE layer forward, per mode (D = Dispatch, C = Combine, async on the comm stream):
 *
 *   regular   : norm qkv core out | norm gate permute D | routed(D) C | shared | unpermute(C)
 *   farskip   : norm qkv | unpermute(C[l-1]) | norm gate permute D | core out | routed(D) C | shared
 *               (steps 1–8 of §4.1: D overlaps core attention; C overlaps shared experts and the next
 *                layer's qkv, and is waited for only before the next gate)
 *   attn_only : attention | unpermute(C[l-1]) | router D | routed(D) C | shared      (C far-skipped)
 *   mlp_only  : unpermute(C[l-1]) | norm qkv | router D | core out | routed C | shared | unpermute(C)
 */
namespace {
// The model's own ops run where a range starts or ends the stack (ProgramBuilder::model_op).
void model_inputs_at_start(ProgramBuilder& b, LayerRange range) {
  if (range.first == 0) b.model_op(0, LayerOp::MODEL_INPUTS, FWD);
}
void final_norm_at_end(ProgramBuilder& b, const std::vector<LayerMode>& modes, LayerRange range, Pass pass) {
  if (range.last == static_cast<int>(modes.size())) b.model_op(range.last - 1, LayerOp::FINAL_NORM, pass);
}
}  // namespace

LayerRange all_layers(const std::vector<LayerMode>& modes) {
  return {0, static_cast<int>(modes.size())};
}

void alltoall_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, bool sync_splits,
                      LayerRange range, const LayerHooks& hooks) {
  OpId pending_combine = NO_OP;
  int pending_layer = -1;
  auto finish_moe = [&](int l, OpId combine) {
    b.compute(l, LayerOp::UNPERMUTE, FWD, {combine});
    b.compute(l, LayerOp::RESIDUAL_ADD, FWD);
  };
  auto flush = [&] {
    if (pending_combine == NO_OP) return;
    finish_moe(pending_layer, pending_combine);
    pending_combine = NO_OP;
  };
  model_inputs_at_start(b, range);
  for (int l = range.first; l < range.last; ++l) {
    const LayerMode& m = modes[static_cast<std::size_t>(l)];
    if (hooks.before_forward) hooks.before_forward(l);
    if (!b.is_moe_layer(l)) {
      flush();
      b.norm(l, LayerOp::ATTN_NORM, 0);
      b.compute(l, LayerOp::ATTN_QKV, FWD, {b.sequence_gather(l, false, "attn")});
      for (LayerOp op : {LayerOp::ATTN_CORE, LayerOp::ATTN_OUT}) b.compute(l, op, FWD);
      b.compute(l, LayerOp::RESIDUAL_ADD, FWD, {b.sequence_scatter(l, false, "attn")});
      b.compute(l, LayerOp::MLP_NORM, FWD);
      tensor_parallel_mlp(b, l, LayerOp::DENSE_FFN);
      b.compute(l, LayerOp::RESIDUAL_ADD, FWD);
      continue;
    }
    if (!m.skip_attn) flush();
    auto route_and_dispatch = [&] {
      flush();  // the MoE input o[l-1] includes routed[l-1]
      b.compute(l, LayerOp::MLP_NORM, FWD);
      OpId gate = b.compute(l, LayerOp::GATE, FWD);
      if (sync_splits) b.host_sync(l, gate);
      OpId permuted = b.compute(l, LayerOp::PERMUTE, FWD);
      OpId d = b.collective(l, Comm::DISPATCH, {permuted});
      if (!m.overlap) b.wait(d);
      return d;
    };
    // A skipping attention input is P_l + S_{l-1}: the shared experts' output of l-1 joins it in the norm.
    const bool shared_pending = m.skip_attn && l > range.first && b.scenario().model.moe.shared_experts > 0;
    b.norm(l, LayerOp::ATTN_NORM, shared_pending ? 1 : 0);
    b.compute(l, LayerOp::ATTN_QKV, FWD, {b.sequence_gather(l, false, "attn")});
    OpId dispatch = NO_OP;
    if (m.skip_mlp) dispatch = route_and_dispatch();
    b.compute(l, LayerOp::ATTN_CORE, FWD);
    b.compute(l, LayerOp::ATTN_OUT, FWD);
    b.compute(l, LayerOp::RESIDUAL_ADD, FWD, {b.sequence_scatter(l, false, "attn")});
    if (!m.skip_mlp) dispatch = route_and_dispatch();
    OpId routed = b.compute(l, LayerOp::ROUTED_EXPERTS, FWD, {dispatch});
    OpId combine = b.collective(l, Comm::COMBINE, {routed, dispatch});
    if (!m.overlap || (!m.skip_attn && !m.skip_mlp && !m.shared_overlap)) b.wait(combine);
    tensor_parallel_mlp(b, l, LayerOp::SHARED_EXPERTS);
    bool next_skips =
        l + 1 < range.last && b.is_moe_layer(l + 1) && modes[static_cast<std::size_t>(l) + 1].skip_attn;
    if (next_skips) {
      pending_combine = combine;
      pending_layer = l;
    } else {
      finish_moe(l, combine);  // the last layer's Combine stays exposed (§4.1)
    }
  }
  flush();
  final_norm_at_end(b, modes, range, FWD);
}

/*
 * One MoE layer backward (CB/DB = gradients of Combine/Dispatch, async all-to-alls):
 *
 *   regular   : unpermute CB | shared | routed(CB) DB | router(DB) | attention
 *   farskip   : unpermute CB | out core shared | routed(CB) DB | qkv norm | router(DB)
 *               (routed-expert backward right after the CB sync, DB launched before the qkv
 *                gradient; the first all-to-all of backward stays exposed, as §4.1 says)
 *   attn_only : unpermute CB | attention[l+1] shared | routed(CB) DB | router(DB)   (attention
 *               gradients of the layer above overlap this layer's CB)
 *   mlp_only  : unpermute CB | shared | routed(CB) DB | attention | router(DB)
 */
void alltoall_backward(ProgramBuilder& b, const std::vector<LayerMode>& modes, LayerRange range,
                       const LayerHooks& hooks) {
  int deferred_attention = -1;
  auto done = [&](int l) {
    if (hooks.after_backward) hooks.after_backward(l);
  };
  auto flush = [&] {
    if (deferred_attention < 0) return;
    attention_backward(b, deferred_attention);
    done(deferred_attention);
    deferred_attention = -1;
  };
  bool first_all_to_all = true;
  final_norm_at_end(b, modes, range, Pass::DGRAD);
  for (int l = range.last - 1; l >= range.first; --l) {
    const LayerMode& m = modes[static_cast<std::size_t>(l)];
    if (!b.is_moe_layer(l)) {
      flush();
      tensor_parallel_mlp_backward(b, l, LayerOp::DENSE_FFN);
      b.backward(l, LayerOp::MLP_NORM);
      attention_backward(b, l);
      done(l);
      continue;
    }
    const bool converted = m.skip_attn || m.skip_mlp;
    if (!m.skip_attn) flush();
    OpId unpermuted = b.backward(l, LayerOp::UNPERMUTE);
    OpId cb = b.collective(l, Comm::COMBINE_BWD, {unpermuted});
    if (!m.overlap || (converted && first_all_to_all)) b.wait(cb);
    first_all_to_all = false;
    if (m.skip_attn && m.skip_mlp) {
      b.backward(l, LayerOp::ATTN_OUT);
      b.backward(l, LayerOp::ATTN_CORE);
    } else if (m.skip_attn) {
      flush();
    }
    if (!converted && !m.shared_overlap) b.wait(cb);
    tensor_parallel_mlp_backward(b, l, LayerOp::SHARED_EXPERTS);
    OpId routed = b.backward(l, LayerOp::ROUTED_EXPERTS, {cb});
    OpId db = b.collective(l, Comm::DISPATCH_BWD, {routed, cb});
    if (!m.overlap) b.wait(db);
    if (m.skip_attn && m.skip_mlp) {
      b.backward(l, LayerOp::ATTN_QKV);
      b.backward(l, LayerOp::ATTN_NORM);
      router_backward(b, l, db);
    } else if (m.skip_mlp) {
      attention_backward(b, l);
      router_backward(b, l, db);
    } else {
      router_backward(b, l, db);
      if (m.skip_attn) {
        deferred_attention = l;
        continue;
      }
      attention_backward(b, l);
    }
    done(l);
  }
  flush();
}

/*
 * vLLM/SGLang prefill, every rank holding all tokens (A = attention all-reduce, M = MoE all-reduce):
 *   regular : attention A(wait) | MoE M(wait)
 *   farskip : (wait A[l-1]) attention A | (wait M[l-1]) MoE M         (§4.2: each all-reduce is
 *             synchronized only before the next sub-block of its own kind)
 */
namespace {
/**
 * One all-reduce of the layer's output (`which`) after `input`; with `quantized` its payload is 1 byte per
 * element: a quantize pass (bf16 in, 1 byte out) and a dequantize pass (the reverse) around it on the comm
 * stream, as a quantized all-reduce kernel does inside the collective. Returns what consumers wait for.
 */
OpId layer_allreduce(ProgramBuilder& b, int layer, Comm which, OpId input, bool quantized) {
  if (!quantized) return b.collective(layer, which, {input});
  const Scenario& s = b.scenario();
  const double elements = static_cast<double>(s.workload.tokens) * static_cast<double>(s.model.hidden);
  const std::string name = which == Comm::ATTN_ALLREDUCE ? "attn_allreduce" : "moe_allreduce";
  OpId quantize = b.memory_kernel(layer, COMM, name + ".quantize", name, 2.0 * elements, elements, {input});
  OpId reduced = b.collective(layer, which, {quantize});
  return b.memory_kernel(layer, COMM, name + ".dequantize", name, elements, 2.0 * elements, {reduced});
}
}  // namespace

void allreduce_forward(ProgramBuilder& b, const std::vector<LayerMode>& modes, LayerRange range,
                       bool quantized, const LayerHooks& hooks) {
  OpId attn_pending = NO_OP, moe_pending = NO_OP;
  model_inputs_at_start(b, range);
  for (int l = range.first; l < range.last; ++l) {
    const LayerMode& m = modes[static_cast<std::size_t>(l)];
    if (hooks.before_forward) hooks.before_forward(l);
    b.wait(attn_pending);
    if (!m.skip_attn) b.wait(moe_pending);  // attention input includes the MoE output of l-1
    // FarSkip inputs are summed inside the norms from their parts: attention adds the MoE outputs before
    // l-1, the MoE block those and MoE_{l-1} (the layer runner's RMSNorm with one and two extra inputs).
    const bool farskip_input = m.skip_attn && l > range.first;
    attention_forward(b, l, farskip_input ? 1 : 0);
    OpId attn_out = b.compute(l, LayerOp::RESIDUAL_ADD, FWD);
    OpId a = layer_allreduce(b, l, Comm::ATTN_ALLREDUCE, attn_out, quantized);
    // MoE input skipping attention[l] lets A overlap the MoE compute.
    attn_pending = m.skip_mlp && m.overlap ? a : NO_OP;
    if (attn_pending == NO_OP) b.wait(a);
    b.wait(moe_pending);
    b.norm(l, LayerOp::MLP_NORM, farskip_input && m.skip_mlp ? 2 : 0);
    OpId last;
    if (b.is_moe_layer(l)) {
      b.compute(l, LayerOp::GATE, FWD);
      b.compute(l, LayerOp::PERMUTE, FWD);
      b.compute(l, LayerOp::ROUTED_EXPERTS, FWD);
      b.compute(l, LayerOp::UNPERMUTE, FWD);
      last = b.compute(l, LayerOp::SHARED_EXPERTS, FWD);
    } else {
      last = b.compute(l, LayerOp::DENSE_FFN, FWD);
    }
    OpId moe = layer_allreduce(b, l, Comm::MOE_ALLREDUCE, last, quantized);
    moe_pending = m.skip_attn && m.overlap ? moe : NO_OP;
    if (moe_pending == NO_OP) b.wait(moe);
    b.compute(l, LayerOp::RESIDUAL_ADD, FWD);
  }
  // The range's output (sent on, or the end of the stack) includes the all-reduces still in flight.
  b.wait(attn_pending);
  b.wait(moe_pending);
  final_norm_at_end(b, modes, range, FWD);
}

}  // namespace moesim::schedules::detail
