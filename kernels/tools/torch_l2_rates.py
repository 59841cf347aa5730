#!/usr/bin/env python3
"""GPU time of PyTorch's elementwise and reduction kernels by size, with their input just written (in L2 where it
fits) and with the L2 flushed first, side by side.

transformers' RMSNorm runs as a chain of such kernels (to fp32, pow, mean, multiply by the reciprocal root, to
bf16, multiply by the weight), each reading what the one before wrote. Learned from a trace at one size, their
rates carry to another only if one knows whether the traced size ran from L2: this tool measures each kernel at
rows x hidden from 2 to 256 MB of operands, in two conditions per case:
  - hot: the input rewritten (copy_) right before the kernel, as its producer in a layer leaves it;
  - cold: a scratch buffer of 4x the L2 written right before instead, which evicts the input.
Per case the median over repeats of the CUDA-event time of the one kernel, and the operand bytes it moves (each
input read once, the output written once; a reduction's output is one value per row).

    python3 kernels/tools/torch_l2_rates.py --out l2-rates.json
"""
import argparse
import json
import statistics

import torch

from torch_dispatch_bench import record_header


def one_kernel_us(prepare, kernel, repeats, warmup=3, hold_ms=0.2):
    """Median GPU microseconds of `kernel` alone, `prepare` run before each call outside the timed span. A sleep
    kernel holds the stream first until the host has queued all of it, so the kernel's issue time stays out."""
    for _ in range(warmup):
        prepare()
        kernel()
    torch.cuda.synchronize()
    events = []
    for _ in range(repeats):
        torch.cuda._sleep(int(hold_ms * 1e-3 * 2e9))  # cycles at ~2 GHz: a hold, not a measurement
        prepare()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        kernel()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1e3 for s, e in events)


def kernels(rows, hidden, device):
    """name -> (input tensor to rewrite, source to rewrite it from, kernel, operand bytes)."""
    bf16, fp32 = torch.bfloat16, torch.float32
    x16 = torch.randn(rows, hidden, device=device, dtype=bf16)
    x32 = torch.randn(rows, hidden, device=device, dtype=fp32)
    y16 = torch.randn_like(x16)
    r32 = torch.rand(rows, 1, device=device, dtype=fp32)
    w16 = torch.randn(hidden, device=device, dtype=bf16)
    n = rows * hidden
    return {
        "to_fp32": (x16, torch.randn_like(x16), lambda: x16.to(fp32), 6 * n),
        "pow": (x32, torch.randn_like(x32), lambda: x32.pow(2), 8 * n),
        "mean": (x32, torch.randn_like(x32), lambda: x32.mean(-1, keepdim=True), 4 * n + 4 * rows),
        "mul_by_row": (x32, torch.randn_like(x32), lambda: x32 * r32, 8 * n + 4 * rows),
        "to_bf16": (x32, torch.randn_like(x32), lambda: x32.to(bf16), 6 * n),
        "mul_by_weight": (x16, torch.randn_like(x16), lambda: w16 * x16, 4 * n + 2 * hidden),
        "add": (x16, torch.randn_like(x16), lambda: x16 + y16, 6 * n),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--rows", default="128,256,512,1024,2048,4096,8192,16384")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20)
    scratch = torch.empty(4 * l2_bytes // 4, device=device, dtype=torch.float32)
    results = []
    for rows in map(int, args.rows.split(",")):
        for name, (tensor, source, kernel, nbytes) in kernels(rows, args.hidden, device).items():
            hot = one_kernel_us(lambda: tensor.copy_(source), kernel, args.repeats)
            cold = one_kernel_us(lambda: scratch.fill_(1.0), kernel, args.repeats)
            r = {"kernel": name, "rows": rows, "hidden": args.hidden, "bytes": nbytes, "hot_us": hot,
                 "cold_us": cold, "hot_GBps": nbytes / hot * 1e-3, "cold_GBps": nbytes / cold * 1e-3}
            results.append(r)
            print(f"{name:14s} rows={rows:6d} {nbytes / 1e6:8.1f} MB: hot {hot:8.1f} us {r['hot_GBps']:6.0f} GB/s, "
                  f"cold {cold:8.1f} us {r['cold_GBps']:6.0f} GB/s", flush=True)
        torch.cuda.empty_cache()
    record = record_header("moesim-torch-l2-rates", repeats=args.repeats, l2_bytes=l2_bytes, results=results)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
