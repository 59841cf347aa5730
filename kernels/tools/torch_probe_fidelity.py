#!/usr/bin/env python3
"""Which host probe follows a host-bound step's issue time from one process to another.

`moesim validate --host-probe` scales a learned profile's host costs by the ratio of two processes' probes, so a
probe is only as good as that ratio is to the ratio of the steps' issue times. This runs several fresh processes on
one machine, each (a) unpinned, as a user's run is, (b) pinned to one core, (c) pinned to one core while a
spinning process holds the core's hyperthread sibling (sharing its caches and issue slots: a slower host that
is not just fewer cycles), or (d) pinned beside three processes streaming memory (the shared last-level cache
and DRAM, as data-loader workers use them). Each process alternates, per round: the shipped probe
(torch_stacks.host_probe: a chain of 16 tiny ops, cache-warm), a step-like probe (one pass over
torch_step_context's pool of 56 different ops, as a step issues them, median of 5 passes), and host-bound EP 1
steps (ABBA order): by default three of the reference stacks and transformers' Qwen3 with its eager experts.

For every probe and step, and every ordered pair of processes (i, j), it predicts step_j = step_i x probe_j /
probe_i (what --host-probe does) and prints the median and maximum |error|, beside predicting step_j = step_i.

    cd kernels && python3 tools/torch_probe_fidelity.py --out-dir DIR [--unpinned 6 --pinned 2 --shared 2 --thrash 2]
    python3 tools/torch_probe_fidelity.py --summarize DIR      # the table again from the processes' JSON

Each process writes DIR/processNN.json (per round values, medians); the table goes to DIR/summary.json too.
"""
import argparse
import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import time

STEPS = ("qwen3-30b-a3b:grouped:train", "qwen3-30b-a3b:loop:forward", "mixtral-8x7b:loop:forward",
         "qwen3-30b-a3b:hf-eager:forward")


def step_probe(device, sync, passes=5):
    """Microseconds per op over one pass of the step-context pool (autograd recording), median of `passes`."""
    import torch  # noqa: PLC0415
    from torch_step_context import chains, op_pool, run_chain  # noqa: PLC0415
    chain = chains(op_pool(device, 8, 16, torch.float32), 0)[0]
    leaf = torch.randn(8, 16, device=device, requires_grad=True)

    def probe():
        samples = []
        for _ in range(passes):
            sync()
            start = time.perf_counter()
            run_chain(chain, leaf)
            samples.append((time.perf_counter() - start) * 1e6 / len(chain))
        sync()
        return statistics.median(samples)
    probe()
    return probe


def child(args):
    import torch  # noqa: PLC0415
    from torch_stacks.bench import build_steps  # noqa: PLC0415
    from torch_stacks.config import RunConfig  # noqa: PLC0415
    from torch_stacks.distributed import init_context  # noqa: PLC0415
    from torch_stacks.host_probe import make_probe  # noqa: PLC0415
    from torch_stacks.run import builder_for  # noqa: PLC0415
    from torch_stacks.timing import time_steps  # noqa: PLC0415
    ctx = init_context(args.device)
    sync = torch.cuda.synchronize if ctx.is_cuda else (lambda: None)
    probes = {"chain16": make_probe(ctx.device), "step_pool": step_probe(ctx.device, sync)}
    cfgs = [RunConfig(m, s, phase=p, tokens=args.tokens, seq=args.tokens, layers=2, scale=args.scale).validate()
            for m, s, p in (spec.split(":") for spec in args.steps)]
    steps = [build_steps([c], ctx, builder_for(c.style))[1][0] for c in cfgs]
    values = {name: [] for name in probes} | {c.name(1): [] for c in cfgs}
    for _ in range(args.rounds):
        for name, probe in probes.items():
            values[name].append(probe())
        for cfg, timing in zip(cfgs, time_steps(steps, ctx, 1, 2)):
            values[cfg.name(1)] += timing["issue_ms"]
    record = {"condition": args.child, "cpus": sorted(os.sched_getaffinity(0)), "torch": torch.__version__,
              "median": {k: statistics.median(v) for k, v in values.items()}, "values": values}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


def sibling_of(cpu):
    """Another logical CPU of `cpu`'s core (the kernel's list: "3,19" or "2-3"), or None."""
    path = f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    ids = set()
    for part in (open(path).read().strip() if os.path.exists(path) else str(cpu)).split(","):
        low, _, high = part.partition("-")
        ids.update(range(int(low), int(high or low) + 1))
    ids.discard(cpu)
    return min(ids) if ids else None


MEMORY_HOG = "import numpy as np\na = np.ones(1 << 26)\nwhile True: a += 1.0"  # streams 512 MiB: the LLC and DRAM


def drive(args):
    os.makedirs(args.out_dir, exist_ok=True)
    cpus = sorted(os.sched_getaffinity(0))
    plan = [("unpinned", None, [])] * args.unpinned
    plan += [("pinned", cpus[(1 + 4 * i) % len(cpus)], []) for i in range(args.pinned)]
    for i in range(args.shared):
        cpu = cpus[(3 + 4 * i) % len(cpus)]
        sibling = sibling_of(cpu)
        if sibling is None:
            print(f"cpu {cpu} has no hyperthread sibling: no 'shared' process", flush=True)
            continue
        plan.append(("shared", cpu, [(sibling, "while True: pass")]))
    for i in range(args.thrash):
        cpu = cpus[(2 + 4 * i) % len(cpus)]
        others = [c for c in cpus if c != cpu and c != sibling_of(cpu)][:3]
        plan.append(("thrash", cpu, [(c, MEMORY_HOG) for c in others]))
    for n, (condition, cpu, hogs) in enumerate(plan):
        out = os.path.join(args.out_dir, f"process{n:02d}.json")
        cmd = [sys.executable, __file__, "--child", condition, "--out", out, "--rounds", str(args.rounds),
               "--device", args.device, "--tokens", str(args.tokens), "--scale", str(args.scale),
               "--steps", *args.steps]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        running = [subprocess.Popen(["taskset", "-c", str(c), sys.executable, "-c", code]) for c, code in hogs]
        try:
            subprocess.run(cmd, check=True)
        finally:
            for hog in running:
                hog.kill()
        print(f"process {n}: {condition} cpu {cpu} hogs on {[c for c, _ in hogs]}", flush=True)
    summarize(args.out_dir)


def summarize(out_dir):
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out_dir, "process*.json")))]
    names = list(runs[0]["median"])
    probes, steps = names[:2], names[2:]
    for r in runs:
        print(r["condition"], r["cpus"][:4], {k: round(v, 2) for k, v in r["median"].items()})

    def speed(run, probe):  # "both": the geometric mean of the two probes
        m = run["median"]
        return 1.0 if probe is None else (m[probes[0]] * m[probes[1]]) ** 0.5 if probe == "both" else m[probe]

    summary = {}
    for step in steps:
        for probe in (None, *probes, "both"):
            errors = []
            for a, b in itertools.permutations(runs, 2):
                scale = speed(b, probe) / speed(a, probe)
                errors.append(abs(a["median"][step] * scale / b["median"][step] - 1) * 100)
            summary.setdefault(step, {})[probe or "no probe"] = {
                "pairs": len(errors), "median_pct": statistics.median(errors), "max_pct": max(errors)}
            print(f"{step:60s} {probe or 'no probe':10s} pairs {len(errors):3d}: |error| median "
                  f"{statistics.median(errors):5.1f}% max {max(errors):5.1f}%")
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir")
    parser.add_argument("--summarize")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--unpinned", type=int, default=6)
    parser.add_argument("--pinned", type=int, default=2)
    parser.add_argument("--shared", type=int, default=2, help="processes with a spinning hyperthread sibling")
    parser.add_argument("--thrash", type=int, default=2, help="processes beside three memory-streaming ones")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--steps", nargs="+", default=STEPS, help="MODEL:STYLE:PHASE of each host-bound step")
    parser.add_argument("--scale", type=int, default=1, help="divide every width (CPU smoke runs)")
    args = parser.parse_args()
    tools = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [tools, os.path.dirname(tools)]
    if args.child:
        child(args)
    elif args.summarize:
        summarize(args.summarize)
    else:
        drive(args)


if __name__ == "__main__":
    main()
