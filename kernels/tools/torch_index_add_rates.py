#!/usr/bin/env python3
"""GPU time of the scatter-add that puts expert outputs back in token order (`out.index_add_(0, token, rows)`,
as MoE unpermute and transformers' experts write it) against a dense add of as many elements, side by side.

index_add_ adds each source row into its target row with atomic additions; in bf16 these are much slower than the
bandwidth a dense elementwise kernel reaches, and targets that receive several rows (top_k > 1) contend. Cases:
tokens T, hidden H, k rows per token (R = T k source rows, each token's k rows at random places, as after a sort by
expert), dtype; per case the median over repeats of the CUDA-event time per call of 10 calls in a row, of
  - index_add: out[T, H].index_add_(0, index[R], rows[R, H]);
  - dense_add: torch.add(a[R, H], b[R, H], out=c): the same element count read twice and written once (6 bytes per
    bf16 element, the index_add's bytes if it ran at streaming bandwidth);
and their ratio, which cost/implementations/make_builtins.py turns into the index_add step's bytes per element.

    python3 kernels/tools/torch_index_add_rates.py --out index-add.json
"""
import argparse
import json
import statistics

import torch

from cuda_timing import per_call_us
from torch_dispatch_bench import record_header


def timed(fn, repeats, calls=10, warmup=3):
    """Median over repeats of the GPU time per call of `calls` back-to-back calls (unheld: these kernels outlast
    their issue)."""
    return statistics.median(per_call_us(fn, warmup, repeats, calls))


def case(tokens, hidden, k, dtype, repeats, device):
    rows = tokens * k
    generator = torch.Generator(device=device).manual_seed(tokens * 31 + k)
    index = torch.arange(tokens, device=device).repeat_interleave(k)
    index = index[torch.randperm(rows, device=device, generator=generator)]
    src = torch.randn(rows, hidden, device=device, dtype=dtype)
    out = torch.zeros(tokens, hidden, device=device, dtype=dtype)
    a, b, c = src, torch.randn_like(src), torch.empty_like(src)
    index_add = timed(lambda: out.index_add_(0, index, src), repeats)
    dense_add = timed(lambda: torch.add(a, b, out=c), repeats)
    return {"tokens": tokens, "hidden": hidden, "k": k, "dtype": str(dtype).replace("torch.", ""), "rows": rows,
            "index_add_us": index_add, "dense_add_us": dense_add, "ratio": index_add / dense_add}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="2048,8192")
    parser.add_argument("--hidden", default="2048,4096")
    parser.add_argument("--k", default="1,2,8")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    results = []
    for dtype in args.dtypes.split(","):
        for tokens in map(int, args.tokens.split(",")):
            for hidden in map(int, args.hidden.split(",")):
                for k in map(int, args.k.split(",")):
                    r = case(tokens, hidden, k, getattr(torch, dtype), args.repeats, device)
                    results.append(r)
                    print(f"{r['dtype']:9s} T={tokens:5d} H={hidden:5d} k={k}: index_add {r['index_add_us']:8.1f} us, "
                          f"dense add {r['dense_add_us']:7.1f} us, ratio {r['ratio']:5.2f}", flush=True)
    record = record_header("moesim-torch-index-add-rates", repeats=args.repeats, results=results)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
