#!/usr/bin/env python3
"""Times PyTorch's scaled_dot_product_attention on attention_bench's shapes, per backend.

Causal self-attention, bf16, batch 1 x each of --heads head counts, head dims 128/128 and 192/128 (MLA),
forward and backward, with each SDPA backend PyTorch offers here (flash, cuDNN, memory-efficient).
FLOPs are counted as attention_bench counts them (causal half only):
  fwd 2*B*H*L^2*(d_qk + d_v)/2, bwd twice that.
Times come from CUDA events around --calls calls after warm-up, the stream held by a sleep kernel so that the
host's issue time stays out (see time_ms); the table shows the median per call. The
correctness column is ||out - ref|| / ||ref|| against the math backend on fp32 inputs.
Output: a '#'-commented table on stdout and, with --json, a JSON file created exclusively
(an existing name gets .1, .2, ... instead of being overwritten).
"""
import argparse
import datetime
import json
import os
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

from cuda_timing import per_call_us  # kernels/tools/, next to this script
from exclusive_file import open_exclusive

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def time_ms(fn, warmup, iters, calls, hold_ms):
    """Per-call GPU milliseconds, the stream held (cuda_timing.per_call_us): one call per event pair, unheld, also
    counts the host's time to issue the call whenever the kernel is shorter, which read a 32-head forward at
    L 2048 as 114 us where the kernel takes 80 (data/calibration/2026-11-27-nvidia-h100-sdpa-held)."""
    return [t * 1e-3 for t in per_call_us(fn, warmup, iters, calls, hold_ms)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heads", default="16,32,64",
                        help="head counts; several let moesim calibrate read other models' heads at equal work "
                             "(64 heads at L 4096 do the work of 16 at 8192)")
    parser.add_argument("--seq_lens", default="512,1024,2048,4096")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10, help="calls per event pair (1: the pre-2026-11-27 method)")
    parser.add_argument("--hold_ms", type=float, default=5.0, help="sleep kernel before each timed group (0: none)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()

    device = torch.cuda.get_device_name(0)
    print(f"# torch_sdpa_compare: torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}, GPU {device}")
    print(f"# Command: {' '.join(sys.argv)}")
    print("#")
    print(f"# {'backend':>9} {'pass':>4} {'BH':>4} {'L':>6} {'d_qk':>4} {'d_v':>4} {'time':>9} {'min':>9} "
          f"{'p99':>9} {'rate':>8} {'relerr':>8}")
    print(f"# {'':>9} {'':>4} {'':>4} {'':>6} {'':>4} {'':>4} {'(us)':>9} {'(us)':>9} {'(us)':>9} "
          f"{'(TFLOP/s)':>8} {'':>8}")
    results = []
    torch.manual_seed(1234)
    cases = [(h, dims) for h in (int(x) for x in args.heads.split(",")) for dims in ((128, 128), (192, 128))]
    for heads, (d_qk, d_v) in cases:
        for length in (int(x) for x in args.seq_lens.split(",")):
            shape_q = (1, heads, length, d_qk)
            q = torch.rand(shape_q, device="cuda", dtype=torch.bfloat16) * 2 - 1
            k = torch.rand(shape_q, device="cuda", dtype=torch.bfloat16) * 2 - 1
            v = torch.rand((1, heads, length, d_v), device="cuda", dtype=torch.bfloat16) * 2 - 1
            d_out = torch.rand_like(v) * 2 - 1
            with sdpa_kernel(SDPBackend.MATH):
                qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
                reference = sdpa(qf, kf, vf, is_causal=True)
                reference.backward(d_out.float())
                ref_grads = [t.grad for t in (qf, kf, vf)]
                reference = reference.detach()
            flops_fwd = 2 * heads * length * length * (d_qk + d_v) / 2
            for name, backend in BACKENDS.items():
                row = {"backend": name, "batch_heads": heads, "seq_len": length, "d_qk": d_qk, "d_v": d_v}
                try:
                    with sdpa_kernel(backend):
                        qb, kb, vb = (t.clone().requires_grad_() for t in (q, k, v))
                        out = sdpa(qb, kb, vb, is_causal=True)
                        fwd_err = ((out.float() - reference).norm() / reference.norm()).item()
                        fwd = time_ms(lambda: sdpa(qb, kb, vb, is_causal=True), args.warmup, args.iters, args.calls,
                                      args.hold_ms)
                        out.backward(d_out, retain_graph=True)
                        bwd_err = max(((t.grad.float() - r).norm() / r.norm()).item()
                                      for t, r in zip((qb, kb, vb), ref_grads))
                        bwd = time_ms(lambda: out.backward(d_out, retain_graph=True), args.warmup, args.iters,
                                      args.calls, args.hold_ms)
                except RuntimeError as error:
                    print(f"# {name:>9} d_qk={d_qk} d_v={d_v} L={length}: not supported here "
                          f"({str(error).splitlines()[0][:100]})")
                    continue
                for pass_name, samples, err, flops in (("fwd", fwd, fwd_err, flops_fwd),
                                                       ("bwd", bwd, bwd_err, 2 * flops_fwd)):
                    med = statistics.median(samples) * 1e3
                    p99 = sorted(samples)[min(len(samples) - 1, int(0.99 * len(samples)))] * 1e3
                    rate = flops / (med * 1e-6) / 1e12
                    print(f"  {name:>9} {pass_name:>4} {heads:>4} {length:>6} {d_qk:>4} {d_v:>4} {med:>9.1f} "
                          f"{min(samples) * 1e3:>9.1f} {p99:>9.1f} {rate:>8.1f} {err:>8.2e}")
                    results.append(dict(row, **{"pass": pass_name, "time_us": {"p50": med, "min": min(samples) * 1e3,
                                                                                "p99": p99},
                                                "flops": flops, "rate_tflops": rate, "rel_err_vs_math_fp32": err}))
            del q, k, v, d_out, qf, kf, vf, reference, ref_grads
            torch.cuda.empty_cache()
    if args.json:
        handle, path = open_exclusive(args.json)
        with handle:
            json.dump({"schema_version": 1, "tool": "moesim-kernels/torch_sdpa_compare.py", "args": sys.argv,
                       "start_time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "cudnn": torch.backends.cudnn.version(), "gpu": device,
                       "timing": {"calls_per_event_pair": args.calls, "hold_ms": args.hold_ms},
                       "environment": {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "CUDA_", "TORCH"))},
                       "results": results}, handle, indent=1)
        print(f"# JSON results: {path}")


if __name__ == "__main__":
    main()
