"""Routed-expert computation in the two styles, over the experts one rank holds.

Weights are stored as Hugging Face transformers 5.x stores them: gate_up [E, 2F, H] and down [E, H, F].

  loop     for each expert hit: its rows by index, its SwiGLU MLP, index_add_ back (transformers' eager
           experts); one host synchronisation to find the experts hit and one per expert (nonzero).
  grouped  rows already grouped by expert: one grouped GEMM per projection (torch._grouped_mm, as Megatron's
           GroupedMLP and transformers' grouped_mm); where the torch has no _grouped_mm, one mm per expert
           over the contiguous rows of each (Megatron's SequentialMLP), which needs the row counts on the host.
"""
import torch
import torch.nn.functional as F
from torch import nn

from .layers import INIT_STD, swiglu

HAS_GROUPED_MM = hasattr(torch, "_grouped_mm")


def grouped_gemm_impl(device):
    """Name of the kernel path the grouped style takes on `device` (recorded in every record)."""
    return "torch._grouped_mm" if HAS_GROUPED_MM and device.type == "cuda" else "sequential_mm"


def _expert_weights(experts, rows, cols, seed, dtype, device):
    # One generator per global expert id, so expert e has the same weights at any EP degree.
    weight = torch.empty(len(experts), rows, cols, dtype=dtype, device=device)
    for i, e in enumerate(experts):
        g = torch.Generator(device=device).manual_seed(seed + e)
        weight[i] = torch.randn(rows, cols, generator=g, device=device).mul_(INIT_STD).to(dtype)
    return nn.Parameter(weight)


class LocalExperts(nn.Module):
    """The experts [first, first + count) of one rank."""

    def __init__(self, shape, first, count, dtype, device, seed):
        super().__init__()
        ids = range(first, first + count)
        self.count = count
        self.gate_up = _expert_weights(ids, 2 * shape.expert_ffn, shape.hidden, seed, dtype, device)
        self.down = _expert_weights(ids, shape.hidden, shape.expert_ffn, seed + 1_000_003, dtype, device)

    def loop(self, x, pair_rows, pair_expert, pair_weight, out_rows):
        """Sum over pairs p of pair_weight[p] * MLP_{pair_expert[p]}(x[pair_rows[p]]) into row pair_rows[p].

        pair_weight None means 1. Returns [out_rows, hidden].
        """
        out = x.new_zeros(out_rows, x.shape[-1])
        hit = torch.bincount(pair_expert, minlength=self.count).nonzero().flatten().tolist()
        for e in hit:
            pairs = (pair_expert == e).nonzero().squeeze(1)
            rows = pair_rows[pairs]
            y = swiglu(x[rows], self.gate_up[e], self.down[e])
            if pair_weight is not None:
                y = y * pair_weight[pairs, None]
            out.index_add_(0, rows, y)
        return out

    def grouped(self, x, counts, host_counts=None):
        """x holds counts[e] rows of expert e after those of expert e-1; returns their MLP outputs in place order.

        counts: int tensor on x's device; host_counts: the same as a list where the caller has it already.
        """
        if HAS_GROUPED_MM and x.is_cuda:
            offsets = torch.cumsum(counts, dim=0, dtype=torch.int32)
            h = torch._grouped_mm(x, self.gate_up.transpose(-2, -1), offs=offsets)
            gate, up = h.chunk(2, dim=-1)
            return torch._grouped_mm(F.silu(gate) * up, self.down.transpose(-2, -1), offs=offsets)
        if host_counts is None:
            host_counts = counts.tolist()
        chunks = x.split(host_counts)
        return torch.cat([swiglu(c, self.gate_up[e], self.down[e]) for e, c in enumerate(chunks)])
