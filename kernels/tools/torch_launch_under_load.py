#!/usr/bin/env python3
"""Host cost of eager ops launched while the GPU still runs earlier work, against the same ops on an idle GPU, and
the host probe after a GPU-bound step against after a host-bound one.

A trace of a GPU-bound step (the host far ahead of long kernels) gives every launch's host cost with the GPU busy;
the host probe (torch_stacks/host_probe.py) runs after a synchronisation, on an idle GPU. If a launch costs the
host more while the GPU is busy, a profile learned from a GPU-bound trace carries host costs a host-bound stack
does not pay, and the probe cannot see it. Per round (the cases' order alternates):
  - idle: synchronise, then time `--chains` runs of the probe's chain (16 tiny ops, autograd recording) and as
    many plain launches (torch.neg of a tiny tensor, no autograd), each call on its own clock;
  - busy: the same right after queueing `--busy-ms` of GPU work (square bf16 matmuls), which is still running
    when the timed calls end (`busy_at_end` counts the rounds where it was);
  - deep: after the same busy work, `--deep` plain launches, each timed, to show where the launch queue fills
    (the host then waits for the GPU inside the launch).
Then, with `--stacks`, two configurations of kernels/torch_stacks timed alternately in one process (ABBA), the
probe after each step: Qwen3-30B-A3B grouped at 2,048 tokens (host-bound) and Mixtral 8x7B grouped at 8,192
(GPU-bound), two layers, EP 1, training.

    python3 kernels/tools/torch_launch_under_load.py --out launch-under-load.json [--stacks]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_stacks.host_probe import OPS  # noqa: E402


def busy_work(ms_target, device):
    """Queues about ms_target of matmuls; returns an event recorded after them."""
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    a @ a  # the library's first call sets itself up
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        a @ a
    end.record()
    end.synchronize()
    one_ms = start.elapsed_time(end) / 10
    count = max(1, round(ms_target / max(one_ms, 1e-3)))

    def queue():
        for _ in range(count):
            a @ a
        done = torch.cuda.Event()
        done.record()
        return done
    return queue, count * one_ms


def timed_chain(x):
    start = time.perf_counter_ns()
    y = x
    for op in OPS:
        y = op(y)
    return (time.perf_counter_ns() - start) / 1e3 / len(OPS)


def timed_launch(small):
    start = time.perf_counter_ns()
    torch.neg(small)
    return (time.perf_counter_ns() - start) / 1e3


def one_round(case, args, x, small, queue):
    torch.cuda.synchronize()
    done = queue() if case != "idle" else None
    out = {}
    if case == "deep":
        out["launch_us"] = [timed_launch(small) for _ in range(args.deep)]
    else:
        out["chain_us_per_op"] = statistics.median(timed_chain(x) for _ in range(args.chains))
        with torch.no_grad():
            out["launch_us"] = statistics.median(timed_launch(small) for _ in range(args.chains))
    if done is not None:
        out["busy_at_end"] = not done.query()
    torch.cuda.synchronize()
    return out


def launch_cases(args, device):
    x = torch.randn(8, 16, device=device, requires_grad=True)
    small = torch.randn(8, 16, device=device)
    queue, busy_ms = busy_work(args.busy_ms, device)
    for _ in range(3):  # warm: kernels loaded, autograd nodes set up
        one_round("idle", args, x, small, queue)
    rounds = {"idle": [], "busy": [], "deep": []}
    for r in range(args.rounds):
        order = ["idle", "busy", "deep"] if r % 2 == 0 else ["deep", "busy", "idle"]
        for case in order:
            rounds[case].append(one_round(case, args, x, small, queue))
    out = {"busy_ms_queued": busy_ms}
    for case in ("idle", "busy"):
        out[case] = {"chain_us_per_op_median": statistics.median(r["chain_us_per_op"] for r in rounds[case]),
                     "launch_us_median": statistics.median(r["launch_us"] for r in rounds[case]),
                     "per_round": rounds[case]}
    out["busy"]["busy_at_end"] = sum(r["busy_at_end"] for r in rounds["busy"])
    buckets = []
    for lo in range(0, args.deep, 250):
        calls = [c for r in rounds["deep"] for c in r["launch_us"][lo:lo + 250]]
        buckets.append({"from": lo, "median_us": statistics.median(calls), "max_us": max(calls)})
    out["deep"] = {"buckets": buckets, "busy_at_end": sum(r["busy_at_end"] for r in rounds["deep"])}
    return out


def stack_cases(args, ctx):
    from torch_stacks.bench import build_steps  # noqa: PLC0415 (the stacks only when asked)
    from torch_stacks.config import RunConfig  # noqa: PLC0415
    from torch_stacks.host_probe import make_probe  # noqa: PLC0415
    from torch_stacks.run import builder_for  # noqa: PLC0415
    from torch_stacks.timing import time_steps  # noqa: PLC0415
    cfgs = [RunConfig("qwen3-30b-a3b", "grouped", phase="train", tokens=2048, seq=2048, layers=2).validate(),
            RunConfig("mixtral-8x7b", "grouped", phase="train", tokens=8192, seq=4096, layers=2).validate()]
    built = [build_steps([c], ctx, builder_for(c.style)) for c in cfgs]
    timings = time_steps([b[1][0] for b in built], ctx, 3, args.stack_iters, make_probe(ctx.device))
    out = {}
    for cfg, t in zip(cfgs, timings):
        out[cfg.name(1)] = {key: {"median": statistics.median(v), "values": v} for key, v in t.items()}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--chains", type=int, default=20, help="probe chains (and plain launches) per round")
    parser.add_argument("--busy-ms", type=float, default=200.0)
    parser.add_argument("--deep", type=int, default=2000, help="plain launches behind the busy work")
    parser.add_argument("--stacks", action="store_true")
    parser.add_argument("--stack-iters", type=int, default=10)
    args = parser.parse_args()
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    record = {"kind": "moesim-launch-under-load", "args": vars(args), "torch": torch.__version__,
              "device": torch.cuda.get_device_name(device), "launch": launch_cases(args, device)}
    if args.stacks:
        from torch_stacks.distributed import init_context  # noqa: PLC0415
        record["stacks"] = stack_cases(args, init_context("cuda"))
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
    launch = record["launch"]
    print(f"chain us/op idle {launch['idle']['chain_us_per_op_median']:.2f} busy "
          f"{launch['busy']['chain_us_per_op_median']:.2f}; launch us idle {launch['idle']['launch_us_median']:.2f} "
          f"busy {launch['busy']['launch_us_median']:.2f} (busy at end {launch['busy']['busy_at_end']}/{args.rounds})")
    for b in launch["deep"]["buckets"]:
        print(f"deep launches {b['from']}+: median {b['median_us']:.2f} us, max {b['max_us']:.1f}")
    for name, t in record.get("stacks", {}).items():
        print(name, {k: round(v["median"], 2) for k, v in t.items()})


if __name__ == "__main__":
    main()
