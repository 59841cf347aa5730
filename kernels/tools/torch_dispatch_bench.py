#!/usr/bin/env python3
"""Host cost of eager PyTorch ops as MoE layers issue them, without the GPU: per call, the framework's dispatch
(Python binding, dispatcher, autograd recording, output allocation) on tensors too small for the kernel to matter;
single ops, and layer code (an HF RMSNorm, a SwiGLU expert, rotate-half RoPE) per kernel-launching op, forward and
the backward autograd runs for it (forward + backward time minus forward time). The minimum over repeats is the
undisturbed cost where the CPU is shared.

The built-in implementation profiles (cost/implementations/make_builtins.py) add this to launch_bench's CUDA
launch cost for each eager kernel. Runs on any torch (the CPU tests' Debian torch 1.13 included); the record
names the CPU, whose speed the profiles' host costs are relative to.

    python3 kernels/tools/torch_dispatch_bench.py --out dispatch.json
"""
import argparse
import json
import platform
import statistics
import time

import torch


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cases():
    """name -> a callable that issues one eager op (inputs require grad where a layer's would)."""
    x = torch.randn(8, 16, requires_grad=True)
    w = torch.randn(16, 16, requires_grad=True)
    col = torch.randn(8, 1, requires_grad=True)
    idx = torch.arange(8)
    flat = torch.randint(0, 4, (32,))
    mask = torch.zeros(32, dtype=torch.bool)
    mask[::3] = True
    host = torch.randn(4)
    return {
        "elementwise": lambda: x * col,              # mul, add, silu, neg, cast: one kernel each
        "reduction": lambda: x.mean(-1, keepdim=True),
        "mm": lambda: x @ w,                         # F.linear / torch.mm
        "index": lambda: x[idx],                     # gather rows by index
        "index_add": lambda: torch.zeros(8, 16).index_add_(0, idx, x.detach()),
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
def layer_cases():
    x = torch.randn(8, 16, requires_grad=True)
    norm, mlp = RMSNorm(16), SwiGLU(16, 8)
    return {"rmsnorm": (lambda: norm(x), 8), "swiglu": (lambda: mlp(x), 4), "rope": (lambda: rotate_half(x), 5)}


def time_case(fn, iters, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return {"p50": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": repeats}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {}
    for name, fn in cases().items():
        for _ in range(200):
            fn()
        results[name] = time_case(fn, args.iters, args.repeats)
        print(f"{name:12s} {results[name]['p50']:7.2f} us/call (min {results[name]['min']:.2f})")
    for name, (fn, ops) in layer_cases().items():
        grad_out = fn().detach().clone()
        def forward_backward(fn=fn, grad_out=grad_out):
            fn().backward(grad_out)
        for _ in range(200):
            forward_backward()
        forward = time_case(fn, args.iters, args.repeats)
        both = time_case(forward_backward, args.iters, args.repeats)
        # Per kernel-launching op of the forward: its forward, and the backward autograd runs for it.
        results["layer_" + name + "_forward_per_op"] = {k: v / ops if k != "samples" else v for k, v in forward.items()}
        results["layer_" + name + "_backward_per_op"] = {
            k: (both[k] - forward[k]) / ops if k != "samples" else v for k, v in both.items()}
        for key in ("layer_" + name + "_forward_per_op", "layer_" + name + "_backward_per_op"):
            print(f"{key:32s} {results[key]['p50']:7.2f} us (min {results[key]['min']:.2f})")
    record = {"schema_version": 1, "tool": "moesim-torch-dispatch-bench", "unit": "us_per_call",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cpu_model": cpu_model(), "torch": torch.__version__, "python": platform.python_version(),
              "iters": args.iters, "repeats": args.repeats, "results": results}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
