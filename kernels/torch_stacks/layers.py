"""The dense pieces of a decoder layer, written as eager PyTorch users write them (Hugging Face style).

Attention is split where FarSkip splits it (paper §4.1): qkv() is the preparation of q, k, v (projections,
MLA's latent norm, RoPE) and core() is the causal attention (torch SDPA); out() is the output projection.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

INIT_STD = 0.02
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def seeded_weight(shape, seed, dtype, device, std=INIT_STD):
    """A parameter of N(0, std^2) values drawn from `seed` alone, so every rank and every style builds the
    same numbers for the same seed."""
    g = torch.Generator(device=device).manual_seed(seed)
    return nn.Parameter(torch.randn(shape, generator=g, device=device, dtype=torch.float32).mul_(std).to(dtype))


class RMSNorm(nn.Module):
    """x / rms(x) * weight, computed in float32 as Hugging Face's LlamaRMSNorm does."""

    def __init__(self, width, dtype, device, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width, dtype=dtype, device=device))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rotary_tables(seq, dim, dtype, device, base=10000.0):
    """cos, sin of shape [seq, dim] for rotate-half RoPE."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    angles = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rotary(x, cos, sin):
    """x [batch, heads, seq, dim] rotated by the tables."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def _sdpa_has_gqa():
    try:
        F.scaled_dot_product_attention(*(torch.zeros(1, 2, 1, 8) for _ in range(3)), enable_gqa=False)
        return True
    except (TypeError, AttributeError, RuntimeError):
        return False


HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
HAS_SDPA_GQA = HAS_SDPA and _sdpa_has_gqa()


def causal_attention(q, k, v):
    """Causal attention over [batch, heads, seq, dim]; k, v may have fewer heads (GQA).

    torch SDPA where the torch has it (2.0+), with enable_gqa where it exists (2.5+) and repeated KV heads
    otherwise; an unfused softmax(QK^T)V on older torches (the CPU tests' Debian torch 1.13).
    """
    groups = q.shape[1] // k.shape[1]
    if groups > 1 and not HAS_SDPA_GQA:
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    if HAS_SDPA:
        extra = {"enable_gqa": True} if groups > 1 and HAS_SDPA_GQA else {}
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
    seq = q.shape[2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1).to(v.dtype) @ v


class Attention(nn.Module):
    """GQA/MHA with one fused QKV projection, or MLA as DeepSeek-V2 writes it (moesim's ATTN_QKV kernels)."""

    def __init__(self, shape, seq, dtype, device, seed):
        super().__init__()
        a, hidden = shape.attention, shape.hidden
        self.a, self.seq = a, seq
        self.mla = a.kind == "mla"
        w = lambda rows, cols, k: seeded_weight((rows, cols), seed + k, dtype, device)  # noqa: E731
        if self.mla:
            q_width = a.heads * a.qk_head_dim
            if a.q_lora_rank:
                self.w_q_a, self.q_a_norm = w(a.q_lora_rank, hidden, 1), RMSNorm(a.q_lora_rank, dtype, device)
                self.w_q_b = w(q_width, a.q_lora_rank, 2)
            else:
                self.w_q = w(q_width, hidden, 1)
            self.w_kv_a = w(a.kv_lora_rank + a.rope_head_dim, hidden, 3)
            self.kv_a_norm = RMSNorm(a.kv_lora_rank, dtype, device)
            self.w_kv_b = w(a.heads * (a.head_dim + a.v_head_dim), a.kv_lora_rank, 4)
            rotary_dim = a.rope_head_dim
        else:
            self.w_qkv = w((a.heads + 2 * a.kv_heads) * a.head_dim, hidden, 1)
            if a.qk_norm:  # Qwen3: each head of q and k RMS-normalized before RoPE
                self.q_norm, self.k_norm = RMSNorm(a.head_dim, dtype, device), RMSNorm(a.head_dim, dtype, device)
            rotary_dim = a.head_dim
        self.w_o = w(hidden, a.heads * a.value_head_dim, 5)
        cos, sin = rotary_tables(seq, rotary_dim, dtype, device)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def _heads(self, x, heads, dim, norm=None):
        x = x.view(-1, self.seq, heads, dim)
        return (norm(x) if norm is not None else x).transpose(1, 2)

    def qkv(self, x):
        """[tokens, hidden] -> q, k, v as [batch, heads, seq, dim], RoPE applied."""
        a = self.a
        if not self.mla:
            q, k, v = F.linear(x, self.w_qkv).split(
                [a.heads * a.head_dim, a.kv_heads * a.head_dim, a.kv_heads * a.head_dim], dim=-1)
            q = self._heads(q, a.heads, a.head_dim, getattr(self, "q_norm", None))
            k = self._heads(k, a.kv_heads, a.head_dim, getattr(self, "k_norm", None))
            v = self._heads(v, a.kv_heads, a.head_dim)
            return apply_rotary(q, self.cos, self.sin), apply_rotary(k, self.cos, self.sin), v
        if a.q_lora_rank:
            q = F.linear(self.q_a_norm(F.linear(x, self.w_q_a)), self.w_q_b)
        else:
            q = F.linear(x, self.w_q)
        q = self._heads(q, a.heads, a.qk_head_dim)
        q_nope, q_rope = q.split([a.head_dim, a.rope_head_dim], dim=-1)
        latent, k_rope = F.linear(x, self.w_kv_a).split([a.kv_lora_rank, a.rope_head_dim], dim=-1)
        kv = self._heads(F.linear(self.kv_a_norm(latent), self.w_kv_b), a.heads, a.head_dim + a.v_head_dim)
        k_nope, v = kv.split([a.head_dim, a.v_head_dim], dim=-1)
        k_rope = apply_rotary(self._heads(k_rope, 1, a.rope_head_dim), self.cos, self.sin)
        q = torch.cat((q_nope, apply_rotary(q_rope, self.cos, self.sin)), dim=-1)
        k = torch.cat((k_nope, k_rope.expand(-1, a.heads, -1, -1)), dim=-1)
        return q, k, v

    def core(self, q, k, v):
        """Causal attention -> [tokens, heads * value_head_dim]."""
        o = causal_attention(q, k, v)
        return o.transpose(1, 2).reshape(-1, self.a.heads * self.a.value_head_dim)

    def out(self, o):
        return F.linear(o, self.w_o)


def swiglu(x, w_gate_up, w_down):
    """silu(x W_g^T) * (x W_u^T) W_d^T with the gate and up projections fused in one [2F, H] weight."""
    gate, up = F.linear(x, w_gate_up).chunk(2, dim=-1)
    return F.linear(F.silu(gate) * up, w_down)


class SharedExperts(nn.Module):
    """All shared experts as one SwiGLU MLP of width shared_experts * shared_ffn (moesim's SHARED_EXPERTS); with
    shared_gate, its output scaled per token by sigmoid(x w^T), w [1, H], as Qwen2-MoE's shared_expert_gate."""

    def __init__(self, shape, dtype, device, seed):
        super().__init__()
        width = shape.shared_width
        self.w_gate_up = seeded_weight((2 * width, shape.hidden), seed, dtype, device)
        self.w_down = seeded_weight((shape.hidden, width), seed + 1, dtype, device)
        self.w_out_gate = seeded_weight((1, shape.hidden), seed + 2, dtype, device) if shape.shared_gate else None

    def forward(self, x):
        out = swiglu(x, self.w_gate_up, self.w_down)
        if self.w_out_gate is None:
            return out
        return torch.sigmoid(F.linear(x, self.w_out_gate)) * out


class Router(nn.Module):
    """Gate GEMM, softmax in float32, top-k, weights renormalized over the chosen experts (Qwen3/Mixtral).

    With a forced assignment (routing.py) the top-k still runs and its choice is replaced; the weights are
    the softmax probabilities of the forced experts, renormalized.
    """

    def __init__(self, shape, dtype, device, seed, assignment=None):
        super().__init__()
        self.top_k = shape.top_k
        self.w_gate = seeded_weight((shape.experts, shape.hidden), seed, dtype, device)
        self.register_buffer("assignment", assignment, persistent=False)

    def forward(self, x):
        probs = F.linear(x, self.w_gate).float().softmax(dim=-1)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        if self.assignment is not None:
            chosen = self.assignment
            weights = probs.gather(1, chosen)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return chosen, weights.to(x.dtype)
