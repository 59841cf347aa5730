#!/usr/bin/env python3
"""torch._grouped_mm, the grouped GEMM of the `grouped` reference stack and transformers' grouped_mm experts, timed
at the routed experts' shapes of moesim's models against one dense torch.matmul of the same work in the same
process (the clocks are not locked, so only the ratio carries over between runs).

  python3 kernels/tools/torch_grouped_mm_bench.py --out grouped_mm.json [--iters 20] [--quick]

Per case (a model's fc1 or fc2, a number of local experts, rows per expert): the forward call as the stack makes
it (x [G*R, K] times the expert weights [G, N, K] transposed, offsets of the rows), its backward (dgrad and wgrad
of both operands from one autograd call, and each alone: autograd computes only the gradients asked for), and
torch.matmul of x [G*R, K] by one [K, N] weight (and that GEMM's dgrad and wgrad): the same FLOPs in one cuBLAS
GEMM. At EP 1 also rows per expert in proportion to 1/rank (Zipf(1)) around two means. Times are medians of
CUDA-event timings of single calls after warm-up; a sleep kernel holds the stream until the host has issued the
call, so the host's dispatch (autograd's most of all) stays out of the GPU time.
"""
import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys

# (model, hidden, expert ffn, experts) of the shipped specs whose experts the stacks run (models/specs)
MODELS = (("qwen3-30b-a3b", 2048, 768, 128), ("deepseek-v2-lite", 2048, 1408, 64),
          ("olmoe-1b-7b", 2048, 1024, 64), ("mixtral-8x7b", 4096, 14336, 8), ("llama4-scout", 5120, 8192, 16))
ROWS = (64, 128, 256, 384, 512, 768, 1024, 2048, 4096)
EP = (1, 2, 4)
MAX_FLOPS = 4e12  # per forward call: keeps the largest Mixtral cases to a few ms
SKEWED_MEAN_ROWS = (128, 512)  # EP 1 cases whose rows per expert follow Zipf(1) around this mean


def zipf_rows(groups, mean_rows):
    """Rows per group in proportion to 1/(rank+1), multiples of 8 (the kernel's 16-byte alignment), at least 8,
    summing to groups * mean_rows: skewed routing's tile padding differs from that of the mean."""
    total = groups * mean_rows
    weights = [1.0 / (g + 1) for g in range(groups)]
    rows = [max(8, 8 * round(total * w / sum(weights) / 8)) for w in weights]
    rows[0] += total - sum(rows)
    return rows


def cases(quick):
    out = []
    for model, hidden, ffn, experts in MODELS:
        for proj, n, k in (("fc1", 2 * ffn, hidden), ("fc2", hidden, ffn)):
            for ep in EP[:1] if quick else EP:
                groups = max(1, experts // ep)
                for rows in ROWS[::3] if quick else ROWS:
                    if 2.0 * groups * rows * n * k <= MAX_FLOPS:
                        out.append({"model": model, "proj": proj, "groups": groups, "rows_per_group": rows, "n": n,
                                    "k": k})
            for mean_rows in () if quick or experts < 2 else SKEWED_MEAN_ROWS:
                if 2.0 * experts * mean_rows * n * k <= MAX_FLOPS:
                    out.append({"model": model, "proj": proj, "groups": experts, "rows_per_group": mean_rows, "n": n,
                                "k": k, "rows": zipf_rows(experts, mean_rows)})
    return out


HOLD_MS = 1.0  # longer than any call's host issue (autograd's backward of one op: ~0.1 ms)


def time_us(fn, warmup, iters):
    """Median of single calls, each between two CUDA events behind a hold (cuda_timing's samples, one call each)."""
    from cuda_timing import per_call_us  # noqa: PLC0415 (imports torch)
    return statistics.median(per_call_us(fn, warmup, iters, calls=1, hold_ms=HOLD_MS))


def measure(torch, case, warmup, iters):
    g, r, n, k = case["groups"], case["rows_per_group"], case["n"], case["k"]
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(g * r, k, device=dev, dtype=dt).mul_(0.02).requires_grad_()
    w = torch.randn(g, n, k, device=dev, dtype=dt).mul_(0.02).requires_grad_()
    rows = torch.tensor(case.get("rows", [r] * g), device=dev, dtype=torch.int32)
    offs = rows.cumsum(0, dtype=torch.int32)
    y = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
    dy = torch.randn_like(y)

    def backward(*wrt):
        return lambda: torch.autograd.grad(torch._grouped_mm(x, w.transpose(-2, -1), offs=offs), wrt, dy)

    forward_us = time_us(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs), warmup, iters)
    fwd_bwd_us = time_us(backward(x, w), warmup, iters)
    fwd_dgrad_us = time_us(backward(x), warmup, iters)
    fwd_wgrad_us = time_us(backward(w), warmup, iters)
    dense_w = w[0].detach().transpose(0, 1).contiguous()  # [K, N]
    xd = x.detach()
    dense_us = time_us(lambda: torch.matmul(xd, dense_w), warmup, iters)
    dyd = dy.detach()
    dense_dgrad_us = time_us(lambda: torch.matmul(dyd, dense_w.t()), warmup, iters)
    dense_wgrad_us = time_us(lambda: torch.matmul(xd.t(), dyd), warmup, iters)
    flops = 2.0 * g * r * n * k
    return dict(case, forward_us=forward_us, backward_us=max(0.0, fwd_bwd_us - forward_us),
                dgrad_us=max(0.0, fwd_dgrad_us - forward_us), wgrad_us=max(0.0, fwd_wgrad_us - forward_us),
                dense_forward_us=dense_us, dense_dgrad_us=dense_dgrad_us, dense_wgrad_us=dense_wgrad_us,
                forward_tflops=flops / forward_us / 1e6, dense_tflops=flops / dense_us / 1e6,
                grouped_over_dense=forward_us / dense_us)


def gpu_state():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi: {e}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="EP 1 and every third row count only")
    args = p.parse_args(argv)
    import torch  # noqa: PLC0415 (the usage text needs no torch)
    if not torch.cuda.is_available() or not hasattr(torch, "_grouped_mm"):
        print("torch_grouped_mm_bench: needs a CUDA device and torch._grouped_mm", file=sys.stderr)
        return 2
    before = gpu_state()
    rows = []
    for case in cases(args.quick):
        rows.append(measure(torch, case, args.warmup, args.iters))
        c = rows[-1]
        print(f"{c['model']:<18} {c['proj']} G {c['groups']:>3} R {c['rows_per_group']:>5} N {c['n']:>5} "
              f"K {c['k']:>5}: fwd {c['forward_us']:9.1f} us ({c['forward_tflops']:6.1f} TF/s), "
              f"bwd {c['backward_us']:9.1f} us, grouped / dense {c['grouped_over_dense']:.3f}", flush=True)
        torch.cuda.empty_cache()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"schema_version": 1, "kind": "moesim-torch-grouped-mm-bench",
                   "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(),
                   "host": platform.node(), "gpu_before": before, "gpu_after": gpu_state(),
                   "warmup": args.warmup, "iters": args.iters, "hold_ms": HOLD_MS, "results": rows}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
