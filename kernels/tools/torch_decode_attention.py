#!/usr/bin/env python3
"""Times attention over a KV cache (decode) with PyTorch's scaled_dot_product_attention, to check how moesim
reads a causal attention efficiency curve for calls whose keys were cached before their queries.

A decode step is 1 query per sequence and head after P cached keys. Kernels built for it (FlashMLA, FlashInfer,
flash-decoding) pack the query heads that share a key head into one query tile; this tool does the same with
SDPA: per sequence, the G query heads sharing one key head become G query rows (non-causal) over P keys:
q [B, Hkv, G, d], k and v [B, Hkv, P, d]. G = 1 is multi-head attention (memory-bound: each key is used once);
G = 8 is Llama/Qwen-style GQA; G = 128 is absorbed MLA's shape (one latent key head for all 128 query heads;
moesim's head dims here are 128, where MLA's are 576/512).
FLOPs: 2 x B x Hkv x G x P x (d + d) (QK^T and PV); bytes: q, k, v and the output once.
Times come from CUDA events around 10 calls after warm-up, the stream held by a sleep kernel (cuda_timing.py);
the median per call is kept.

    python3 kernels/tools/torch_decode_attention.py --json decode.json
"""
import argparse
import datetime
import json
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

from cuda_timing import per_call_us  # kernels/tools/, next to this script

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="8,32,128,256")
    parser.add_argument("--cached", default="1024,2048,4096")
    parser.add_argument("--groups", default="1,8,128", help="query heads per key head")
    parser.add_argument("--query_heads", type=int, default=128, help="query heads per sequence (G=1: key heads)")
    parser.add_argument("--head_dim", type=int, default=128)
    parser.add_argument("--max_cache_gb", type=float, default=16, help="skip cases whose K and V exceed this")
    parser.add_argument("--hold_ms", type=float, default=5.0,
                        help="sleep kernel before each timed group, so the host's issue time stays out (0: none, "
                             "as the 2026-11-27 data were taken)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    dev = torch.device("cuda")
    d = args.head_dim
    results = []
    print(f"# torch_decode_attention: torch {torch.__version__}, GPU {torch.cuda.get_device_name(0)}")
    print(f"# {'backend':>9} {'B':>4} {'Hkv':>4} {'G':>4} {'P':>6} {'us':>9} {'TF/s':>7} {'GB/s':>7}")
    for group in (int(g) for g in args.groups.split(",")):
        kv_heads = max(1, args.query_heads // group)
        for batch in (int(b) for b in args.batches.split(",")):
            for cached in (int(p) for p in args.cached.split(",")):
                if 2.0 * batch * kv_heads * cached * d * 2 > args.max_cache_gb * 1e9:
                    continue
                q = torch.randn(batch, kv_heads, group, d, device=dev, dtype=torch.bfloat16)
                k = torch.randn(batch, kv_heads, cached, d, device=dev, dtype=torch.bfloat16)
                v = torch.randn_like(k)
                flops = 2.0 * batch * kv_heads * group * cached * (d + d)
                nbytes = 2.0 * (2 * q.numel() + k.numel() + v.numel())
                for name, backend in BACKENDS.items():
                    try:
                        with sdpa_kernel(backend):
                            samples = per_call_us(lambda: sdpa(q, k, v), args.warmup, args.repeats,
                                                  hold_ms=args.hold_ms)
                            p50, best = statistics.median(samples), min(samples)
                    except RuntimeError:
                        continue
                    results.append({"backend": name, "batch": batch, "kv_heads": kv_heads, "group": group,
                                    "cached": cached, "head_dim": d, "flops": flops, "bytes": nbytes,
                                    "time_us": {"p50": p50, "min": best}})
                    print(f"  {name:>9} {batch:4d} {kv_heads:4d} {group:4d} {cached:6d} {p50:9.2f} "
                          f"{flops / p50 * 1e-6:7.1f} {nbytes / p50 * 1e-3:7.0f}")
                del q, k, v
                torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "x") as f:
            json.dump({"schema_version": 1, "tool": "moesim-kernels/torch_decode_attention.py", "args": sys.argv,
                       "start_time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "gpu": torch.cuda.get_device_name(0),
                       "timing": {"calls_per_event_pair": 10, "hold_ms": args.hold_ms}, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
