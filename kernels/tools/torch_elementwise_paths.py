#!/usr/bin/env python3
"""GPU time of PyTorch elementwise ops whose operands are broadcast or strided views, against the same op on
contiguous tensors, side by side.

PyTorch runs an elementwise op with vectorized loads only when every operand is contiguous; a broadcast operand
(a routing weight [R, 1], RMSNorm's rsqrt [R, 1] or weight [W], RoPE's cos [T, 1, D], a mask [R, 1]) or a strided
view (the halves of a fused gate/up projection from `chunk`) sends it down the generic path, one element per
thread with index arithmetic, which streams far below the memory bandwidth the vectorized path reaches. Eager MoE
stacks run many such ops (transformers' RMSNorm, RoPE, SwiGLU on chunked halves, masked_fill and the routing
weights of its grouped_mm experts). Per case (rows R, width W, dtype) the median over repeats of the CUDA-event
time per call of 10 calls in a row, of:
  - dense_mul:      a[R, W] * b[R, W]                         (vectorized: the reference rate)
  - mul_rows:       a[R, W] * w[R, 1]                         (routing weight, RMSNorm's x * rsqrt)
  - mul_cols:       a[R, W] * w[W]                            (RMSNorm's weight)
  - mul_heads:      a[R, 8, W/8] * c[R, 1, W/8]               (RoPE's cos/sin over heads)
  - masked_fill:    a[R, W].masked_fill(m[R, 1], 0)
  - silu_chunk:     silu(x[R, 2W][:, :W])                     (SwiGLU's gate half)
  - mul_chunk:      s[R, W] * x[R, 2W][:, W:]                 (SwiGLU's up half)
  - silu_dense:     silu(a[R, W])                             (contiguous: should stream like dense_mul)
and (bf16) transformers' RMSNorm and rotate-half RoPE op by op (norm_*, rope_*: heads of 128, the projection's
transposed view); each with the bytes it moves (the generic ops: every operand read once, the output written once;
norm_* and rope_*: the bytes the shipped profiles charge the step) and its time over what those bytes take at
dense_mul's measured rate of the same case: the slowdown that cost/implementations/make_builtins.py turns into the
bytes per element of such steps.

    python3 kernels/tools/torch_elementwise_paths.py --out elementwise-paths.json
"""
import argparse
import json
import statistics

import torch

from cuda_timing import per_call_us
from torch_dispatch_bench import record_header


def timed(fn, repeats, calls=10, warmup=3):
    """Median over repeats of the GPU time per call of `calls` back-to-back calls, behind a hold of the stream (the
    smallest cases take less GPU time than their issue)."""
    return statistics.median(per_call_us(fn, warmup, repeats, calls, hold_ms=2.0))


def cases(rows, width, dtype, device):
    """(name, function, bytes moved) per op of one case."""
    e = torch.tensor([], dtype=dtype).element_size()
    a = torch.randn(rows, width, device=device, dtype=dtype)
    b = torch.randn_like(a)
    w_rows = torch.randn(rows, 1, device=device, dtype=dtype)
    w_cols = torch.randn(width, device=device, dtype=dtype)
    heads = 8
    a3 = a.view(rows, heads, width // heads)
    c3 = torch.randn(rows, 1, width // heads, device=device, dtype=dtype)
    mask = torch.rand(rows, 1, device=device) < 0.01
    fused = torch.randn(rows, 2 * width, device=device, dtype=dtype)
    gate, up = fused.chunk(2, dim=-1)
    n = rows * width
    return [("dense_mul", lambda: a * b, 3 * n * e),
            ("mul_rows", lambda: a * w_rows, 2 * n * e + rows * e),
            ("mul_cols", lambda: a * w_cols, 2 * n * e + width * e),
            ("mul_heads", lambda: a3 * c3, 2 * n * e + n // heads * e),
            ("masked_fill", lambda: a.masked_fill(mask, 0.0), 2 * n * e + rows),
            ("silu_chunk", lambda: torch.nn.functional.silu(gate), 2 * n * e),
            ("mul_chunk", lambda: b * up, 3 * n * e),
            ("silu_dense", lambda: torch.nn.functional.silu(a), 2 * n * e)] + layer_sequences(a, dtype)


def layer_sequences(x, dtype):
    """transformers' RMSNorm and rotate-half RoPE on x [R, W] (heads of 128), op by op, each with the bytes the
    shipped implementation profiles charge it (cost/implementations/make_builtins.py: rms_norm, rope)."""
    rows, width = x.shape
    n, e = rows * width, x.element_size()
    if dtype != torch.bfloat16:
        return []
    x32 = x.float()
    squared = x32.pow(2)
    variance = squared.mean(-1, keepdim=True)
    rs = torch.rsqrt(variance + 1e-6)
    normed = x32 * rs
    weight = torch.randn(width, device=x.device, dtype=dtype)
    heads, dim = width // 128, 128
    q = x.view(1, rows, heads, dim).transpose(1, 2)  # [1, heads, T, D]: the projection's view, not contiguous
    cos = torch.randn(1, 1, rows, dim, device=x.device, dtype=dtype)
    sin = torch.randn_like(cos)
    half = (-q[..., dim // 2:], q[..., : dim // 2])
    rotated = torch.cat(half, dim=-1)
    with_cos, with_sin = q * cos, rotated * sin
    return [("norm_to_float", lambda: x.to(torch.float32), 6 * n),
            ("norm_pow", lambda: x32.pow(2), 8 * n),
            ("norm_mean", lambda: squared.mean(-1, keepdim=True), 4 * n),
            ("norm_mul_rsqrt", lambda: x32 * rs, 8 * n),
            ("norm_to_bf16", lambda: normed.to(dtype), 6 * n),
            ("norm_mul_weight", lambda: weight * x, 4 * n),
            ("rope_neg", lambda: -q[..., dim // 2:], n * e),
            ("rope_cat", lambda: torch.cat(half, dim=-1), 2 * n * e),
            ("rope_mul_cos", lambda: q * cos, 2 * n * e),
            ("rope_mul_sin", lambda: rotated * sin, 2 * n * e),
            ("rope_add", lambda: with_cos + with_sin, 3 * n * e)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="2048,16384,65536")
    parser.add_argument("--widths", default="768,2048,4096")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    results = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for rows in map(int, args.rows.split(",")):
            for width in map(int, args.widths.split(",")):
                measured = [(name, timed(fn, args.repeats), moved) for name, fn, moved in cases(rows, width, dtype, device)]
                dense_rate = measured[0][2] / measured[0][1]  # bytes per us
                for name, us, moved in measured:
                    results.append({"op": name, "rows": rows, "width": width, "dtype": dtype_name, "time_us": us,
                                    "bytes": moved, "GB_per_s": moved / us / 1e3,
                                    "over_dense_rate": us / (moved / dense_rate)})
                print(f"{dtype_name:8s} R={rows:6d} W={width:5d}: " +
                      " ".join(f"{name} {us:.1f}us x{us / (moved / dense_rate):.2f}" for name, us, moved in measured),
                      flush=True)
                torch.cuda.empty_cache()
    record = record_header("moesim-torch-elementwise-paths", repeats=args.repeats, results=results)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
