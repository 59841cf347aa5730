"""An L-layer MoE decoder stack and the two schedules of moesim's alltoall mode.

Every sub-block runs inside a profiler range "moesim.L<layer>.<op>" named after moesim's ops (attn_norm,
attn_qkv, attn_core, attn_out, residual_add, mlp_norm, gate, permute, dispatch, dispatch_wait,
routed_experts, combine, combine_wait, unpermute, shared_experts; qk_norm around Qwen3's per-head q/k norms
inside attn_qkv), so a Kineto trace attributes each kernel launched in forward to the op that launched it.

  regular  attention -> norm, gate -> permute -> Dispatch (waited) -> routed experts -> Combine (waited)
           -> shared experts -> unpermute -> residual: Megatron without shared-expert overlap, op for op
           moesim's `regular` (schedules/src/Layers.cpp, shared_overlap off).
  farskip  FarSkip-Collective §4.1 with every layer converted. The attention input skips the latest routed
           output, the MoE input skips this layer's attention output:
             attn_in[l] = o[l-1] - routed[l-1],   mlp_in[l] = o[l-1]
           Order: attn_norm, qkv | wait Combine[l-1], unpermute[l-1] | norm, gate, permute, Dispatch
           (async) | core attention, out | wait Dispatch, routed experts, Combine (async) | shared
           experts. Dispatch overlaps core attention; Combine overlaps the shared experts and the next
           layer's qkv; the last layer's Combine stays exposed.
"""
from contextlib import contextmanager

from torch import nn
from torch.profiler import record_function

from .annotate import QK_NORMS, add_range
from .layers import Attention, RMSNorm
from .moe import MoeBlock

SCHEDULES = ("regular", "farskip")


@contextmanager
def op_range(layer, name):
    with record_function(f"moesim.L{layer}.{name}"):
        yield


class DecoderLayer(nn.Module):
    def __init__(self, index, shape, style, seq, ep, rank, group, dtype, device, seed, assignment):
        super().__init__()
        self.index = index
        self.attn_norm = RMSNorm(shape.hidden, dtype, device)
        self.attention = Attention(shape, seq, dtype, device, seed)
        for norm in (getattr(self.attention, n, None) for n in QK_NORMS):
            if norm is not None:  # inside attn_qkv's range: the innermost range holds their kernels
                add_range(norm, f"moesim.L{index}.qk_norm")
        self.mlp_norm = RMSNorm(shape.hidden, dtype, device)
        self.moe = MoeBlock(shape, style, ep, rank, group, dtype, device, seed + 10, assignment)

    def _op(self, name):
        return op_range(self.index, name)

    def attention_prefix(self, x):
        with self._op("attn_norm"):
            a = self.attn_norm(x)
        with self._op("attn_qkv"):
            return self.attention.qkv(a)

    def attention_suffix(self, qkv):
        with self._op("attn_core"):
            o = self.attention.core(*qkv)
        with self._op("attn_out"):
            return self.attention.out(o)

    def route_and_dispatch(self, h):
        with self._op("mlp_norm"):
            m = self.mlp_norm(h)
        with self._op("gate"):
            state = self.moe.route(m)
        with self._op("permute"):
            self.moe.permute(state)
        with self._op("dispatch"):
            self.moe.launch_dispatch(state)
        return state

    def experts_and_combine(self, state):
        with self._op("dispatch_wait"):
            self.moe.wait_dispatch(state)
        with self._op("routed_experts"):
            self.moe.routed_experts(state)
        with self._op("combine"):
            self.moe.launch_combine(state)

    def shared_experts(self, state):
        with self._op("shared_experts"):
            return self.moe.shared_experts(state)

    def wait_combine(self, state):
        with self._op("combine_wait"):
            self.moe.wait_combine(state)

    def unpermute(self, state):
        with self._op("unpermute"):
            return self.moe.unpermute(state)

    def finish_moe(self, state):
        self.wait_combine(state)
        return self.unpermute(state)

    def residual(self, *parts):
        with self._op("residual_add"):
            total = parts[0]
            for p in parts[1:]:
                if p is not None:
                    total = total + p
            return total


class MoeStack(nn.Module):
    def __init__(self, shape, style, schedule, layers, seq, ep, rank, group, dtype, device, seed, assignments):
        super().__init__()
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule '{schedule}': expected one of {', '.join(SCHEDULES)}")
        self.schedule = schedule
        self.layers = nn.ModuleList(
            DecoderLayer(i, shape, style, seq, ep, rank, group, dtype, device, seed + 1000 * i, assignments[i])
            for i in range(layers))

    def forward(self, x):
        return self.run(x, self.schedule)

    def run(self, x, schedule):
        """x through the stack under `schedule`, whichever it was built with: one stack, one set of weights,
        serves both schedules of an interleaved measurement."""
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule '{schedule}': expected one of {', '.join(SCHEDULES)}")
        return self._farskip(x) if schedule == "farskip" else self._regular(x)

    def _regular(self, x):
        for layer in self.layers:
            h = layer.residual(x, layer.attention_suffix(layer.attention_prefix(x)))
            state = layer.route_and_dispatch(h)
            layer.experts_and_combine(state)
            layer.wait_combine(state)
            shared = layer.shared_experts(state)
            x = layer.residual(h, layer.unpermute(state), shared)
        return x

    def _farskip(self, x):
        partial, pending, previous = x, None, None  # partial = o[l-1] - routed[l-1]
        for layer in self.layers:
            qkv = layer.attention_prefix(partial)
            full = partial if pending is None else previous.residual(partial, previous.finish_moe(pending))
            state = layer.route_and_dispatch(full)
            attn = layer.attention_suffix(qkv)
            layer.experts_and_combine(state)
            shared = layer.shared_experts(state)
            partial = layer.residual(full, attn, shared)
            pending, previous = state, layer
        return previous.residual(partial, previous.finish_moe(pending))
