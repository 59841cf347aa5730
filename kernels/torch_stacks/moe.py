"""One MoE block split into the stages a schedule places: route, permute, dispatch, experts, combine,
unpermute (moesim's GATE, PERMUTE, Dispatch, ROUTED_EXPERTS, Combine, UNPERMUTE), plus shared experts.

  EP 1, loop     route -> experts.loop over (token, k) pairs straight from the hidden states, weighted,
                 index_add_ into token order (transformers' eager experts: no permute, no unpermute).
  otherwise      permute: rows sorted by global expert (stable argsort, one gather per (token, k) pair);
                 EP > 1: split sizes exchanged (Megatron), Dispatch all-to-all, rows arrive as
                 [source rank][local expert]; grouped sorts those chunks expert-major (Megatron's
                 sort_chunks_by_idxs) and back; loop indexes rows per expert; Combine all-to-all;
                 unpermute: rows weighted by the router and index_add_-ed into token order.
"""
from dataclasses import dataclass, field

import torch
from torch import nn

from . import alltoall
from .experts import LocalExperts
from .marks import mark
from .layers import Router, SharedExperts


@dataclass
class MoeState:
    """What one layer's MoE stages hand each other (one instance per layer per step)."""
    tokens: int
    hidden: torch.Tensor = None      # MLP-normed input [tokens, H]
    chosen: torch.Tensor = None      # [tokens, top_k] expert ids
    weights: torch.Tensor = None     # [tokens, top_k] router weights
    order: torch.Tensor = None       # permuted row p holds pair order[p] (token order[p] // top_k)
    rows: torch.Tensor = None        # permuted (EP 1) or received (EP > 1) rows
    counts: torch.Tensor = None      # rows per global expert, on the device
    send_splits: list = None         # rows to each rank
    received: torch.Tensor = None    # [ep, local experts] rows from each source per local expert (host)
    expert_out: torch.Tensor = None
    dispatch: alltoall.Pending = field(default_factory=alltoall.Pending)
    combine: alltoall.Pending = field(default_factory=alltoall.Pending)


def _sort_chunks(x, sizes, order):
    """Megatron's sort_chunks_by_idxs: x split into chunks of `sizes`, concatenated in `order`."""
    chunks = x.split(sizes)
    return torch.cat([chunks[i] for i in order])


class MoeBlock(nn.Module):
    def __init__(self, shape, style, ep, rank, group, dtype, device, seed, assignment=None):
        super().__init__()
        if shape.experts % ep:
            raise ValueError(f"{shape.name}: {shape.experts} experts do not split over EP {ep}")
        self.style, self.ep, self.group, self.top_k = style, ep, group, shape.top_k
        self.experts_total = shape.experts
        self.local = shape.experts // ep
        self.router = Router(shape, dtype, device, seed, assignment)
        self.experts = LocalExperts(shape, rank * self.local, self.local, dtype, device, seed + 100)
        self.shared = SharedExperts(shape, dtype, device, seed + 200) if shape.shared_width else None

    @property
    def permutes(self):
        return not (self.style == "loop" and self.ep == 1)

    def route(self, hidden):
        state = MoeState(tokens=hidden.shape[0], hidden=hidden)
        state.chosen, state.weights = self.router(hidden)
        return state

    def permute(self, state):
        if not self.permutes:
            return
        flat = state.chosen.flatten()
        state.order = torch.argsort(flat, stable=True)
        state.rows = state.hidden[state.order // self.top_k]
        state.counts = torch.bincount(flat, minlength=self.experts_total)
        if self.ep > 1:
            send, state.received = alltoall.exchange_counts(state.counts, self.ep, self.group)
            state.send_splits = send.tolist()
            mark("splits")

    def launch_dispatch(self, state):
        if self.ep > 1:
            recv_splits = state.received.sum(1).tolist()
            state.rows = alltoall.launch(state.rows, recv_splits, state.send_splits, self.group, state.dispatch)

    def wait_dispatch(self, state):
        if self.ep > 1:
            state.rows = alltoall.wait(state.rows, state.dispatch)

    def routed_experts(self, state):
        if not self.permutes:
            pairs = torch.arange(state.tokens * self.top_k, device=state.hidden.device)
            state.expert_out = self.experts.loop(state.hidden, pairs // self.top_k, state.chosen.flatten(),
                                                 state.weights.flatten(), state.tokens)
        elif self.ep == 1:
            state.expert_out = self.experts.grouped(state.rows, state.counts)
        elif self.style == "loop":
            state.expert_out = self._loop_received(state)
        else:
            state.expert_out = self._grouped_received(state)

    def _loop_received(self, state):
        rows = state.rows
        local_ids = torch.arange(self.local, device=rows.device).repeat(self.ep)
        row_expert = local_ids.repeat_interleave(state.received.flatten().to(rows.device))
        return self.experts.loop(rows, torch.arange(rows.shape[0], device=rows.device), row_expert, None,
                                 rows.shape[0])

    def _grouped_received(self, state):
        received = state.received  # [source, local expert]
        mark("per_expert")
        per_expert = received.sum(0).tolist()
        mark("counts_to_device")
        counts = torch.tensor(per_expert, device=state.rows.device)
        if self.local == 1:
            mark("grouped")
            return self.experts.grouped(state.rows, counts, per_expert)
        mark("chunk_order")
        source_major = received.flatten().tolist()
        expert_major = [s * self.local + e for e in range(self.local) for s in range(self.ep)]
        mark("sort_chunks")
        rows = _sort_chunks(state.rows, source_major, expert_major)
        mark("grouped")
        out = self.experts.grouped(rows, counts, per_expert)
        mark("unsort_order")
        back = sorted(range(len(expert_major)), key=expert_major.__getitem__)
        sizes = received.t().flatten().tolist()
        mark("unsort_chunks")
        return _sort_chunks(out, sizes, back)

    def launch_combine(self, state):
        if self.ep > 1:
            recv_splits = state.received.sum(1).tolist()
            state.expert_out = alltoall.launch(state.expert_out, state.send_splits, recv_splits, self.group,
                                               state.combine)

    def wait_combine(self, state):
        if self.ep > 1:
            state.expert_out = alltoall.wait(state.expert_out, state.combine)

    def unpermute(self, state):
        """The routed output [tokens, H] in token order, weighted by the router."""
        if not self.permutes:
            return state.expert_out
        out = state.expert_out.new_zeros(state.tokens, state.expert_out.shape[-1])
        weights = state.weights.flatten()[state.order]
        return out.index_add_(0, state.order // self.top_k, state.expert_out * weights[:, None])

    def shared_experts(self, state):
        return self.shared(state.hidden) if self.shared is not None else None
