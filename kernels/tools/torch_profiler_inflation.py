#!/usr/bin/env python3
"""Does the PyTorch profiler (Kineto, CUPTI) lengthen the kernels it traces? A chain of N identical kernels, queued
behind a GPU sleep long enough for the host to issue them all (so they run back to back, however small), timed
untraced with CUDA events from the sleep's end and then traced: each kernel's traced duration and the traced
chain's span against the untraced time per kernel. A learned profile takes its kernels' durations from a trace;
what the trace adds per kernel is what a GPU-bound prediction overstates.

    python3 kernels/tools/torch_profiler_inflation.py --out profiler-inflation.json [--chain 400] [--rounds 5]

Cases: an elementwise add at 2^12..2^24 bf16 elements (the small ones are latency-bound, as most of an eager
layer's kernels are) and a bf16 GEMM at two sizes. Per case: untraced us per kernel (median over rounds), traced
us per kernel (the kernels' mean duration in the trace, and the traced chain's first start to last end over N).
"""
import argparse
import gzip
import json
import os
import statistics
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

from cuda_timing import per_call_us  # kernels/tools/, next to this script


def cases(device):
    out = []
    for log2 in (12, 16, 20, 24):
        a = torch.randn(2 ** log2, device=device, dtype=torch.bfloat16)
        b = torch.randn_like(a)
        out.append((f"add_2^{log2}", lambda a=a, b=b: torch.add(a, b)))
    for n in (512, 2048):
        x = torch.randn(n, n, device=device, dtype=torch.bfloat16)
        out.append((f"gemm_{n}", lambda x=x: torch.mm(x, x)))
    return out


HOLD_MS = 30  # longer than the host takes to issue a chain
SLEEP_CYCLES = int(HOLD_MS * 1e-3 * 2e9)  # as cuda_timing holds the stream: cycles at ~2 GHz


def untraced_us(fn, chain, rounds):
    return statistics.median(per_call_us(fn, 0, rounds, calls=chain, hold_ms=HOLD_MS))


def traced_us(fn, chain):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(SLEEP_CYCLES)
        for _ in range(chain):
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and "sleep" not in e.get("name", "")),
                     key=lambda e: e["ts"])
    if len(kernels) < chain:
        return None
    kernels = kernels[-chain:]
    span = kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]
    return {"kernels": len(kernels), "mean_dur_us": statistics.fmean(k["dur"] for k in kernels),
            "median_dur_us": statistics.median(k["dur"] for k in kernels), "span_per_kernel_us": span / chain}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    results = []
    for name, fn in cases(device):
        for _ in range(20):
            fn()
        untraced = untraced_us(fn, args.chain, args.rounds)
        traced = [traced_us(fn, args.chain) for _ in range(3)]
        traced = [t for t in traced if t]
        row = {"case": name, "untraced_us_per_kernel": untraced,
               "traced_mean_dur_us": statistics.median(t["mean_dur_us"] for t in traced),
               "traced_span_per_kernel_us": statistics.median(t["span_per_kernel_us"] for t in traced),
               "untraced_after_us_per_kernel": untraced_us(fn, args.chain, args.rounds)}
        row["dur_over_untraced"] = row["traced_mean_dur_us"] / untraced
        row["span_over_untraced"] = row["traced_span_per_kernel_us"] / untraced
        results.append(row)
        print(json.dumps(row))
    record = {"tool": "moesim-torch-profiler-inflation", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "chain": args.chain, "rounds": args.rounds, "results": results}
    opener = gzip.open if args.out.endswith(".gz") else open
    with opener(args.out, "wt", encoding="utf-8") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
