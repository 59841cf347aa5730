#include "LayerUnits.hpp"

namespace moesim::schedules::detail {

namespace {
constexpr Pass FWD = Pass::FORWARD;
}  // namespace

UnitStream::UnitStream(const models::ModelSpec& model, const ChunkCall& call, const LayerHooks& hooks,
                       bool sync_splits, UnitSplit split, int stack_layers)
    : call_(call), hooks_(hooks), state_(std::make_shared<State>()) {
  state_->entry = call.entry;
  if (call.chunk.backward) {
    backward_units(model, stack_layers);
  } else {
    forward_units(model, sync_splits, split, stack_layers);
  }
}

void UnitStream::step(ProgramBuilder& b) {
  b.set_micro_batch(call_.micro_batch, call_.tag);
  const OpId before = b.last_compute();
  units_[next_++](b);
  if (b.last_compute() != before) state_->last = b.last_compute();
}

std::vector<OpId> UnitStream::outputs() const {
  std::vector<OpId> out;
  if (state_->last != NO_OP) out.push_back(state_->last);
  return out;
}

void UnitStream::forward_units(const models::ModelSpec& model, bool sync_splits, UnitSplit split,
                               int stack_layers) {
  auto st = state_;
  auto first = [st](std::vector<OpId> deps) {  // the chunk's first kernel also waits for its input
    deps.insert(deps.end(), st->entry.begin(), st->entry.end());
    st->entry.clear();
    return deps;
  };
  // The previous MoE layer's unpermute and residual, once its Combine (and shared experts' scatter) are home.
  auto tail = [st, first](ProgramBuilder& b) {
    if (st->combine == NO_OP) return;
    b.compute(st->combine_layer, LayerOp::UNPERMUTE, FWD, first({st->combine}));
    b.compute(st->combine_layer, LayerOp::RESIDUAL_ADD, FWD, {st->scattered});
    st->combine = st->scattered = NO_OP;
  };
  const LayerHooks hooks = hooks_;
  auto attention_in = [=](ProgramBuilder& b, int l) {
    tail(b);
    if (hooks.before_forward) hooks.before_forward(l);
    if (l == 0 && b.runs_model_op(LayerOp::MODEL_INPUTS, FWD))
      b.model_op(0, LayerOp::MODEL_INPUTS, FWD, first({}));
    b.norm(l, LayerOp::ATTN_NORM, 0, first({}));
    b.compute(l, LayerOp::ATTN_QKV, FWD, {b.sequence_gather(l, false, "attn")});
  };
  auto attention_out = [](ProgramBuilder& b, int l) {
    b.compute(l, LayerOp::ATTN_CORE, FWD);
    b.compute(l, LayerOp::ATTN_OUT, FWD);
    b.compute(l, LayerOp::RESIDUAL_ADD, FWD, {b.sequence_scatter(l, false, "attn")});
    b.compute(l, LayerOp::MLP_NORM, FWD);
  };
  auto mlp = [st](ProgramBuilder& b, int l, LayerOp op) {  // dense FFN or shared experts, tensor-parallel
    b.compute(l, op, FWD, {b.sequence_gather(l, false, models::to_string(op))});
    st->scattered = b.sequence_scatter(l, false, models::to_string(op));
  };
  auto route_and_dispatch = [st, sync_splits](ProgramBuilder& b, int l) {
    const OpId gate = b.compute(l, LayerOp::GATE, FWD);
    if (sync_splits) b.host_sync(l, gate);
    const OpId permuted = b.compute(l, LayerOp::PERMUTE, FWD);
    st->dispatch = b.collective(l, Comm::DISPATCH, {permuted});
  };
  auto routed_and_combine = [st](ProgramBuilder& b, int l) {
    const OpId routed = b.compute(l, LayerOp::ROUTED_EXPERTS, FWD, {st->dispatch});
    st->combine = b.collective(l, Comm::COMBINE, {routed, st->dispatch});
    st->combine_layer = l;
  };
  const LayerRange& layers = call_.chunk.layers;
  // After the stack's last layer, in the unit that finishes it (no unit of its own: pairs keep their rhythm).
  auto final_norm = [stack_layers](ProgramBuilder& b, int l) {
    if (l + 1 == stack_layers) b.model_op(l, LayerOp::FINAL_NORM, FWD);
  };
  for (int l = layers.first; l < layers.last; ++l) {
    if (!model.is_moe_layer(l)) {
      units_.emplace_back([=](ProgramBuilder& b) {
        attention_in(b, l);
        attention_out(b, l);
        mlp(b, l, LayerOp::DENSE_FFN);
        b.compute(l, LayerOp::RESIDUAL_ADD, FWD, {st->scattered});
        st->scattered = NO_OP;
        final_norm(b, l);
      });
      continue;
    }
    if (split == UnitSplit::DECODE) {
      units_.emplace_back([=](ProgramBuilder& b) { attention_in(b, l); });
      units_.emplace_back([=](ProgramBuilder& b) {
        attention_out(b, l);
        route_and_dispatch(b, l);
      });
      units_.emplace_back([=](ProgramBuilder& b) { mlp(b, l, LayerOp::SHARED_EXPERTS); });
      units_.emplace_back([=](ProgramBuilder& b) { routed_and_combine(b, l); });
    } else {
      units_.emplace_back([=](ProgramBuilder& b) {
        attention_in(b, l);
        attention_out(b, l);
        route_and_dispatch(b, l);
      });
      units_.emplace_back([=](ProgramBuilder& b) {
        routed_and_combine(b, l);
        mlp(b, l, LayerOp::SHARED_EXPERTS);  // under this chunk's own Combine
      });
    }
  }
  if (layers.last > layers.first && model.is_moe_layer(layers.last - 1))
    units_.emplace_back([=](ProgramBuilder& b) {
      tail(b);
      final_norm(b, layers.last - 1);
    });
}

void UnitStream::backward_units(const models::ModelSpec& model, int stack_layers) {
  auto st = state_;
  auto first = [st](std::vector<OpId> deps) {
    deps.insert(deps.end(), st->entry.begin(), st->entry.end());
    st->entry.clear();
    return deps;
  };
  // The gradient of layer l's unpermute, then its Combine's gradient travels to the experts.
  auto unpermute = [st, first](ProgramBuilder& b, int l) {
    const OpId unpermuted = b.backward(l, LayerOp::UNPERMUTE, first({}));
    st->combine = b.collective(l, Comm::COMBINE_BWD, {unpermuted});
  };
  const LayerHooks hooks = hooks_;
  auto done = [hooks](int l) {
    if (hooks.after_backward) hooks.after_backward(l);
  };
  const LayerRange& layers = call_.chunk.layers;
  // The final norm's gradient first, where the chunk ends the stack.
  auto final_norm = [first, stack_layers](ProgramBuilder& b, int l) {
    if (l + 1 == stack_layers && b.runs_model_op(LayerOp::FINAL_NORM, Pass::DGRAD))
      b.model_op(l, LayerOp::FINAL_NORM, Pass::DGRAD, first({}));
  };
  if (layers.last > layers.first && model.is_moe_layer(layers.last - 1)) {
    prologue_ = true;
    units_.emplace_back([=](ProgramBuilder& b) {
      final_norm(b, layers.last - 1);
      unpermute(b, layers.last - 1);
    });
  }
  for (int l = layers.last - 1; l >= layers.first; --l) {
    const bool below_moe = l - 1 >= layers.first && model.is_moe_layer(l - 1);
    if (!model.is_moe_layer(l)) {
      units_.emplace_back([=](ProgramBuilder& b) {
        final_norm(b, l);
        b.backward(l, LayerOp::DENSE_FFN, first({b.sequence_gather(l, true, "dense_ffn")}));
        b.backward(l, LayerOp::MLP_NORM, {b.sequence_scatter(l, true, "dense_ffn")});
        attention_backward(b, l);
        done(l);
        if (below_moe) unpermute(b, l - 1);
      });
      continue;
    }
    units_.emplace_back([=](ProgramBuilder& b) {
      b.backward(l, LayerOp::SHARED_EXPERTS, {b.sequence_gather(l, true, "shared_experts")});
      st->scattered = b.sequence_scatter(l, true, "shared_experts");
      const OpId routed = b.backward(l, LayerOp::ROUTED_EXPERTS, {st->combine});
      st->dispatch = b.collective(l, Comm::DISPATCH_BWD, {routed, st->combine});
    });
    units_.emplace_back([=](ProgramBuilder& b) {
      router_backward(b, l, st->dispatch);
      b.backward(l, LayerOp::ATTN_OUT, {st->scattered, b.sequence_gather(l, true, "attn")});
      st->scattered = NO_OP;
      for (LayerOp op : {LayerOp::ATTN_CORE, LayerOp::ATTN_QKV}) b.backward(l, op);
      b.backward(l, LayerOp::ATTN_NORM, {b.sequence_scatter(l, true, "attn")});
      done(l);
      if (below_moe) unpermute(b, l - 1);
    });
  }
}

PairOutputs interleave(ProgramBuilder& b, UnitStream& first, UnitStream& second) {
  if (second.has_prologue() && !first.has_prologue()) second.step(b);
  while (!first.done() || !second.done()) {
    if (!first.done()) first.step(b);
    if (!second.done()) second.step(b);
  }
  return {first.outputs(), second.outputs()};
}

}  // namespace moesim::schedules::detail
