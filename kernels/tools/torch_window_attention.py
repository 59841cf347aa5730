#!/usr/bin/env python3
"""Times causal attention through a local window (sliding, chunked) against full causal attention of the same
shapes, to check how moesim times a windowed layer: its score pairs, read on the causal efficiency curve at the
length whose rows of tiles are as long as its own (2 x the window for sliding, the chunk for chunked).

Per backend that runs on the machine, the same q, k, v (bf16, [batch, heads, seq, head_dim], GQA key heads):
  flex        torch.nn.attention.flex_attention, compiled, with a block mask: causal; causal and q - k < W
              (sliding, the query itself included); causal and q // C == k // C (chunked). Blocks the mask
              leaves empty are skipped, so the windowed kernels do the window's work.
  flash_attn  flash_attn.flash_attn_func(causal=True, window_size=(W - 1, 0)) where the package is installed
              (sliding only).
  sdpa        torch's scaled_dot_product_attention(is_causal=True): full causal only, the reference.
Shapes: GPT-OSS's attention (64 query heads, 8 key heads, head dim 64) through sliding windows of 128, 1,024 and
4,096; Llama 4's (40, 8, 128) through chunks of 8,192; sequences of 4,096-32,768 tokens, batch x seq = --tokens.
Forward alone, then forward and backward (a random output gradient): GPU time per call from CUDA events around
`calls` calls after warm-up, the stream held by a sleep kernel (cuda_timing.py); the median of the repeats.

    python3 kernels/tools/torch_window_attention.py --json window.json

`moesim calibrate --from window.json` fits the profile's efficiency.attention_rows from the full causal flex calls
alone (their cost per score pair at the shortest and the longest sequence); the windowed calls check it.
"""
import argparse
import json
import statistics
import sys

import torch
from torch.nn.functional import scaled_dot_product_attention as sdpa

from cuda_timing import per_call_us  # kernels/tools/, next to this script
from torch_dispatch_bench import record_header  # kernels/tools/, next to this script

SHAPES = {  # name: (query heads, key heads, head dim, [(window kind, tokens), ...])
    "gpt-oss": (64, 8, 64, [("sliding", 128), ("sliding", 1024), ("sliding", 4096)]),
    "llama4": (40, 8, 128, [("chunked", 8192)]),
}


def flex_runner():
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: PLC0415
    except ImportError:
        return None
    # every mask, shape and grad mode compiles its own kernel; past dynamo's default limit (8) flex_attention
    # falls back to an unfused implementation that materializes the scores
    torch._dynamo.config.recompile_limit = 512
    torch._dynamo.config.accumulated_recompile_limit = 4096
    compiled = torch.compile(flex_attention, dynamic=False)

    def run(q, k, v, kind, window):
        def mask(b, h, qi, ki):
            causal = qi >= ki
            if kind == "sliding":
                return causal & (qi - ki < window)
            if kind == "chunked":
                return causal & (qi // window == ki // window)
            return causal

        seq = q.shape[2]
        block_mask = create_block_mask(mask, None, None, seq, seq, device=q.device)
        return lambda: compiled(q, k, v, block_mask=block_mask, enable_gqa=True)
    return run


def flash_attn_runner():
    try:
        from flash_attn import flash_attn_func  # noqa: PLC0415
    except ImportError:
        return None

    def run(q, k, v, kind, window):
        if kind == "chunked":
            return None
        qt, kt, vt = (x.transpose(1, 2).contiguous().detach().requires_grad_() for x in (q, k, v))
        size = (window - 1, 0) if kind == "sliding" else (-1, -1)
        return lambda: flash_attn_func(qt, kt, vt, causal=True, window_size=size)
    return run


def sdpa_runner():
    def run(q, k, v, kind, window):
        if kind != "full":
            return None
        return lambda: sdpa(q, k, v, is_causal=True, enable_gqa=True)
    return run


def timed(fn, args, backward):
    if not backward:
        with torch.no_grad():
            return statistics.median(per_call_us(fn, args.warmup, args.repeats, args.calls, args.hold_ms))
    out = fn()
    grad = torch.randn_like(out)

    def step():
        fn().backward(grad)
    return statistics.median(per_call_us(step, args.warmup, args.repeats, args.calls, args.hold_ms))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seqs", default="4096,8192,16384,32768")
    parser.add_argument("--tokens", type=int, default=32768, help="batch x seq of every case")
    parser.add_argument("--backends", default="flex,flash_attn,sdpa")
    parser.add_argument("--hold_ms", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    makers = {"flex": flex_runner, "flash_attn": flash_attn_runner, "sdpa": sdpa_runner}
    backends = {}
    for name in args.backends.split(","):
        runner = makers[name]()
        print(f"# backend {name}: {'runs' if runner else 'not installed'}", flush=True)
        if runner:
            backends[name] = runner
    dev = torch.device("cuda")
    rows = []
    print(f"# torch {torch.__version__}, GPU {torch.cuda.get_device_name(0)}")
    print(f"# {'backend':>10} {'shape':>8} {'seq':>6} {'B':>3} {'window':>14} {'fwd_us':>10} {'fwd+bwd_us':>11}")
    for shape, (heads, kv_heads, head_dim, windows) in SHAPES.items():
        for seq in (int(s) for s in args.seqs.split(",")):
            batch = max(1, args.tokens // seq)
            q = torch.randn(batch, heads, seq, head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(batch, kv_heads, seq, head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(batch, kv_heads, seq, head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            for backend, run in backends.items():
                for kind, window in [("full", 0)] + windows:
                    if kind != "full" and window >= seq:
                        continue  # the window holds the whole sequence: full attention
                    try:
                        fn = run(q, k, v, kind, window)
                        if fn is None:
                            continue
                        forward_us = timed(fn, args, backward=False)
                        both_us = timed(fn, args, backward=True)
                    except (RuntimeError, torch.OutOfMemoryError) as e:  # a backend refusing a shape: recorded
                        print(f"# {backend} {shape} seq {seq} {kind} {window}: {str(e).splitlines()[0]}")
                        rows.append(dict(backend=backend, shape=shape, seq=seq, batch=batch, window_kind=kind,
                                         window=window, error=str(e).splitlines()[0]))
                        torch.cuda.empty_cache()
                        continue
                    rows.append(dict(backend=backend, shape=shape, heads=heads, kv_heads=kv_heads,
                                     head_dim=head_dim, seq=seq, batch=batch, window_kind=kind, window=window,
                                     forward_us=round(forward_us, 2), forward_backward_us=round(both_us, 2)))
                    print(f"  {backend:>10} {shape:>8} {seq:>6} {batch:>3} {kind + ' ' + str(window):>14} "
                          f"{forward_us:>10.1f} {both_us:>11.1f}", flush=True)
                    write(args, rows)  # after every case: a run cut short keeps what it measured
            del q, k, v
            torch.cuda.empty_cache()
    write(args, rows)
    return 0


def write(args, rows):
    if not args.json:
        return
    record = record_header("moesim-torch-window-attention", argv=sys.argv[1:], tokens=args.tokens, results=rows)
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
