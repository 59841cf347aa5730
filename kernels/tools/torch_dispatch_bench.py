#!/usr/bin/env python3
"""Host cost of eager PyTorch ops as MoE layers issue them, without the GPU: per call, the framework's dispatch
(Python binding, dispatcher, autograd recording, output allocation) on tensors too small for the kernel to matter;
single ops, and layer code (an HF RMSNorm, a SwiGLU expert, rotate-half RoPE) per kernel-launching op, forward and
the backward autograd runs for it (forward + backward time minus forward time). The minimum over repeats is the
undisturbed cost where the CPU is shared.

The built-in implementation profiles (cost/implementations/make_builtins.py) add this to launch_bench's CUDA
launch cost for each eager kernel. The record also has the host probe (kernels/torch_stacks/host_probe.py) run in
the same process before and after the cases, which ties the probe to these costs: a host's probe says how its
ops cost against the profiles' host (`host.probe_us`). Runs on any torch (the CPU tests' Debian torch 1.13 included); the record
names the CPU, whose speed the profiles' host costs are relative to.

    python3 kernels/tools/torch_dispatch_bench.py --out dispatch.json
    python3 kernels/tools/torch_dispatch_bench.py --device cuda --out dispatch-cuda.json   # launches included

With `--device cuda` the tensors live on the GPU, so each op's time includes its CUDA launch (the kernels are too
small to keep the host waiting); the device is synchronised before and after each repeat. `--rows/--width/--dtype`
size the layer cases' activations as a real layer's (e.g. 2048 x 2048 bf16); their kernels then take GPU time, so
`--issue-only` times only the issuing of each repeat (the device is synchronised outside the timed part: keep
iters x kernels per call under the launch queue's depth, about a thousand, or the host waits for the GPU).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_stacks.host_probe import make_probe  # noqa: E402 (kernels/ on the path first)


def record_header(tool, **fields):
    """The opening keys of a kernels/tools record: schema, tool, unit (us), date, CPU, GPU (on CUDA), versions;
    then `fields`."""
    header = {"schema_version": 1, "tool": tool, "unit": "us", "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cpu_model": cpu_model(), "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
              "torch": torch.__version__, "python": platform.python_version()}
    header.update(fields)
    return header


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cases(device):
    """name -> a callable that issues one eager op (inputs require grad where a layer's would)."""
    x = torch.randn(8, 16, device=device, requires_grad=True)
    w = torch.randn(16, 16, device=device, requires_grad=True)
    col = torch.randn(8, 1, device=device, requires_grad=True)
    idx = torch.arange(8, device=device)
    flat = torch.randint(0, 4, (32,), device=device)
    mask = torch.zeros(32, dtype=torch.bool, device=device)
    mask[::3] = True
    host = torch.randn(4, device=device)
    return {
        "elementwise": lambda: x * col,              # mul, add, silu, neg, cast: one kernel each
        "reduction": lambda: x.mean(-1, keepdim=True),
        "mm": lambda: x @ w,                         # F.linear / torch.mm
        "index": lambda: x[idx],                     # gather rows by index
        "index_add": lambda: torch.zeros(8, 16, device=device).index_add_(0, idx, x.detach()),
        "cat": lambda: torch.cat((x, x), dim=-1),
        "nonzero": lambda: mask.nonzero(),           # on a GPU this also waits for the device
        "sort": lambda: torch.sort(flat, stable=True),
        "topk": lambda: torch.topk(x, 2, dim=-1),
        "tolist": lambda: host.tolist(),             # the host side of a device -> host copy
        "view": lambda: x.view(2, 4, 16).transpose(1, 2),  # no kernel: metadata only
    }


class RMSNorm(torch.nn.Module):
    """Hugging Face's RMSNorm: 8 ops (cast, pow, mean, add, rsqrt, mul, cast, mul)."""

    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * x32.to(x.dtype)


class SwiGLU(torch.nn.Module):
    """An expert MLP: 4 kernel ops (linear, silu, mul, linear) and a chunk."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.gate_up = torch.nn.Parameter(torch.randn(2 * ffn, hidden))
        self.down = torch.nn.Parameter(torch.randn(hidden, ffn))

    def forward(self, x):
        gate, up = torch.nn.functional.linear(x, self.gate_up).chunk(2, dim=-1)
        return torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, self.down)


def rotate_half(x):
    """Rotate-half RoPE: 5 kernel ops (neg, cat, mul, mul, add) and 2 slices."""
    half = x.shape[-1] // 2
    return x * 0.5 + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * 0.25


# Layer code as eager stacks write it: (module call, kernel-launching ops it issues in forward).
def layer_cases(device, rows=8, width=16, dtype=torch.float32):
    x = torch.randn(rows, width, device=device, dtype=dtype, requires_grad=True)
    norm = RMSNorm(width).to(device=device, dtype=dtype)
    mlp = SwiGLU(width, max(8, width * 3 // 8)).to(device=device, dtype=dtype)
    return {"rmsnorm": (lambda: norm(x), 8), "swiglu": (lambda: mlp(x), 4), "rope": (lambda: rotate_half(x), 5)}


def time_case(fn, iters, repeats, sync, issue_only=False):
    samples = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        if not issue_only:
            sync()
        samples.append((time.perf_counter() - start) / iters * 1e6)
        sync()
    return {"p50": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": repeats}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rows", type=int, default=8, help="layer cases: activation rows")
    parser.add_argument("--width", type=int, default=16, help="layer cases: activation width")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--issue-only", action="store_true", help="time issuing only (see above)")
    parser.add_argument("--layers-only", action="store_true", help="skip the single-op cases")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    probe = make_probe(torch.device(args.device))
    probes = {"before": statistics.median(probe() for _ in range(30))}
    results = {}
    for name, fn in ({} if args.layers_only else cases(args.device)).items():
        for _ in range(200):
            fn()
        results[name] = time_case(fn, args.iters, args.repeats, sync)
        print(f"{name:12s} {results[name]['p50']:7.2f} us/call (min {results[name]['min']:.2f})")
    sized = layer_cases(args.device, args.rows, args.width, getattr(torch, args.dtype))
    for name, (fn, ops) in sized.items():
        grad_out = fn().detach().clone()
        def forward_backward(fn=fn, grad_out=grad_out):
            fn().backward(grad_out)
        for _ in range(min(200, args.iters)):
            forward_backward()
        sync()
        forward = time_case(fn, args.iters, args.repeats, sync, args.issue_only)
        both = time_case(forward_backward, args.iters, args.repeats, sync, args.issue_only)
        # Per kernel-launching op of the forward: its forward, and the backward autograd runs for it.
        results["layer_" + name + "_forward_per_op"] = {k: v / ops if k != "samples" else v for k, v in forward.items()}
        results["layer_" + name + "_backward_per_op"] = {
            k: (both[k] - forward[k]) / ops if k != "samples" else v for k, v in both.items()}
        for key in ("layer_" + name + "_forward_per_op", "layer_" + name + "_backward_per_op"):
            print(f"{key:32s} {results[key]['p50']:7.2f} us (min {results[key]['min']:.2f})")
    probes["after"] = statistics.median(probe() for _ in range(30))
    print(f"host probe {probes['before']:.2f} us per op before, {probes['after']:.2f} after")
    record = {"schema_version": 1, "tool": "moesim-torch-dispatch-bench", "unit": "us_per_call",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cpu_model": cpu_model(), "device": args.device,
              "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None, "torch": torch.__version__, "python": platform.python_version(),
              "iters": args.iters, "repeats": args.repeats, "layer_rows": args.rows, "layer_width": args.width,
              "dtype": args.dtype, "issue_only": args.issue_only, "host_probe_us": probes, "results": results}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
