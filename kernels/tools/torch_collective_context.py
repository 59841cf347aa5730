#!/usr/bin/env python3
"""Host cost of launching an all-to-all inside a step, against the same launch in a warm loop, as
torch_host_costs.py times it.

torch_step_context.py finds that an eager op costs the host more when many different ops run between its calls
(the interpreter's, the dispatcher's and the library's code and branch history are no longer in the core's
caches). A collective's launch runs far more code than a kernel op's (c10d's work object, the NCCL communicator's
stream and event bookkeeping, NCCL's own enqueue), so it may lose more. N processes, one per GPU, time per round:
  - warm: `--calls` all_to_all_single(async_op=True) with split lists, then work.wait(), back to back;
  - chain: every op of torch_step_context's pool once (autograd recording on, as a training forward), `--reps` times;
  - chain + all-to-all: the same, each chain followed by one all-to-all;
host issue time only (perf_counter; the device is synchronised outside the timed part). The all-to-all's cost
in a step's context is (chain + all-to-all - chain) / reps; rounds alternate the order of the three cases, and all
ranks start each case at a barrier. The record gives per rank and as the mean over ranks the median and minimum
over rounds, and the ratio in context / warm that cost/implementations/make_builtins.py applies to the
all-to-all's warm host cost.

    python3 kernels/tools/torch_collective_context.py --processes 2 --out collective-context.json
"""
import argparse
import json
import os
import platform
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torch_dispatch_bench import cpu_model
from torch_step_context import op_pool, run_chain


def timed(fn, sync, barrier):
    sync()
    barrier.wait()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    sync()
    return elapsed * 1e6


def measure(rank, world, args, barrier, queue):
    cuda = args.device == "cuda"
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.set_num_threads(1)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    torch.manual_seed(rank)
    pool = op_pool(device, 8, 16, torch.float32)
    chain = [fn for _, fn in pool]
    leaf = torch.randn(8, 16, device=device, requires_grad=True)
    send = torch.randn(args.rows, args.width, device=device, dtype=torch.bfloat16 if cuda else torch.float32)
    recv = torch.empty_like(send)
    splits = [args.rows // world] * world

    def all_to_all():
        dist.all_to_all_single(recv, send, splits, splits, async_op=True).wait()

    def warm():
        for _ in range(args.calls):
            all_to_all()

    def chain_only():
        for _ in range(args.reps):
            run_chain(chain, leaf)

    def chain_and_all_to_all():
        for _ in range(args.reps):
            run_chain(chain, leaf)
            all_to_all()

    cases = {"warm": warm, "chain": chain_only, "chain_all_to_all": chain_and_all_to_all}
    for fn in cases.values():  # warm-up: every op and the communicator set up once
        for _ in range(3):
            timed(fn, sync, barrier)
    samples = {name: [] for name in cases}
    for round_ in range(args.rounds):
        names = list(cases) if round_ % 2 == 0 else list(reversed(list(cases)))
        for name in names:
            samples[name].append(timed(cases[name], sync, barrier))
    per_call = {
        "warm": [s / args.calls for s in samples["warm"]],
        "in_context": [(a - c) / args.reps for a, c in zip(samples["chain_all_to_all"], samples["chain"])],
        "chain_per_op": [c / (args.reps * len(chain)) for c in samples["chain"]],
    }
    dist.destroy_process_group()
    queue.put((rank, {k: {"p50": statistics.median(v), "min": min(v)} for k, v in per_call.items()}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--calls", type=int, default=20, help="all-to-alls per warm sample")
    parser.add_argument("--reps", type=int, default=5, help="chains per context sample")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--port", type=int, default=29731)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    world = args.processes
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(world), ctx.Queue()
    procs = [ctx.Process(target=measure, args=(r, world, args, barrier, queue)) for r in range(world)]
    for p in procs:
        p.start()
    per_rank = dict(queue.get() for _ in procs)
    for p in procs:
        p.join()
    ranks = [per_rank[r] for r in sorted(per_rank)]
    mean = {k: {s: statistics.mean(r[k][s] for r in ranks) for s in ("p50", "min")} for k in ranks[0]}
    ratio = mean["in_context"]["p50"] / mean["warm"]["p50"]
    for key, value in mean.items():
        print(f"{key:14s} {value['p50']:8.2f} us (min {value['min']:.2f}), mean over {world} ranks")
    print(f"all-to-all launch in a step's context / warm = {ratio:.3f}")
    record = {"schema_version": 1, "tool": "moesim-torch-collective-context", "unit": "us",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpu_model": cpu_model(),
              "device": args.device, "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
              "torch": torch.__version__, "python": platform.python_version(), "processes": world,
              "rounds": args.rounds, "calls": args.calls, "reps": args.reps, "rows": args.rows,
              "width": args.width, "ranks": ranks, "mean_over_ranks": mean, "in_context_over_warm": ratio}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
