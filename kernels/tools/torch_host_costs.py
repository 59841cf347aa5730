#!/usr/bin/env python3
"""Host cost of eager PyTorch ops at a real layer's sizes while N ranks of one node issue at once, one process per
GPU, as an expert-parallel stack runs: torch_dispatch_bench's layer cases (per kernel-launching op, forward and the
backward autograd runs for it), issue time only, in N = 1, 2, 4... concurrent processes started together at a
barrier before each case; the ops whose host work grows with their shape (a GEMM's library heuristics, attention's
backend selection and workspace):
  - linear: F.linear of [rows, width] by [width, width]; its backward runs dgrad and wgrad;
  - grouped_mm (where torch has it): torch._grouped_mm of [rows, width] over 8 experts of [width, width / 4];
  - sdpa: causal scaled_dot_product_attention of [1, width / 128, rows, 128] (16 heads of 128 at width 2048);
and what MoE stacks do beside kernel launches:
  - sort_chunks: Megatron's sort_chunks_by_idxs (x.split(sizes), then torch.cat of the chunks in another order), at
    8 and 128 chunks, forward and backward; the cost per chunk is the slope between the two;
  - autograd_function: applying a Python torch.autograd.Function that returns a view (forward and backward), as
    the all-to-all wrappers of Megatron and of kernels/torch_stacks do around every collective;
  - all_to_all (N > 1): dist.all_to_all_single(async_op=True) with split lists of an even 2048 x 2048 bf16
    exchange, then work.wait() (a stream wait): the host time of launching one, issue only.

    python3 kernels/tools/torch_host_costs.py --processes 1,2,4 --out host-costs.json

Every process uses its own GPU (cuda:rank), one intra-op thread, and reports the minimum and median over repeats;
the record keeps each rank's figures and, per N, their mean. Backward figures are what `.backward()` adds to the
forward, the autograd engine's start of about 75 us per call included (`autograd_function` measures it alone).
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

from torch_dispatch_bench import cpu_model, layer_cases, time_case

CHUNK_COUNTS = (8, 128)


class _ViewFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def sized_op_cases(device, rows, width, dtype):
    """name -> (a call issuing the op at a layer's shape, 1 op)."""
    x = torch.randn(rows, width, device=device, dtype=dtype, requires_grad=True)
    weight = torch.randn(width, width, device=device, dtype=dtype, requires_grad=True)
    out = {"linear": (lambda: torch.nn.functional.linear(x, weight), 1)}
    if hasattr(torch, "_grouped_mm") and device.type == "cuda":
        experts = torch.randn(8, width, width // 4, device=device, dtype=dtype, requires_grad=True)
        offsets = torch.arange(1, 9, device=device, dtype=torch.int32) * (rows // 8)
        out["grouped_mm"] = (lambda: torch._grouped_mm(x, experts, offs=offsets), 1)
    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):  # torch >= 2.0
        heads = max(1, width // 128)
        q, k, v = (torch.randn(1, heads, rows, 128, device=device, dtype=dtype, requires_grad=True) for _ in range(3))
        out["sdpa"] = (lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), 1)
    return out


def sort_chunks(x, count):
    sizes = [x.shape[0] // count] * count
    order = [(i * 5 + 3) % count for i in range(count)] if count % 5 else list(reversed(range(count)))
    chunks = x.split(sizes)
    return torch.cat([chunks[i] for i in order])


def forward_and_backward(fn, iters, repeats, sync, per):
    """Per `per` units: the forward's issue time, and what its backward adds."""
    out = fn()
    grad_out = torch.ones_like(out)

    def both():
        fn().backward(grad_out)

    for _ in range(min(50, iters)):
        both()
    sync()
    forward = time_case(fn, iters, repeats, sync, issue_only=True)
    total = time_case(both, iters, repeats, sync, issue_only=True)
    return ({k: v / per for k, v in forward.items() if k != "samples"},
            {k: (total[k] - forward[k]) / per for k in ("p50", "min", "max")})


def start_rank(rank, world, device_kind, port):
    """One of `world` processes started together: its GPU (cuda:rank) or the CPU, one intra-op thread, and with
    world > 1 a process group (NCCL, gloo on the CPU). Returns the device and its synchronise call."""
    cuda = device_kind == "cuda"
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.set_num_threads(1)
    if world > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    return device, (torch.cuda.synchronize if cuda else (lambda: None))


def run_ranks(measure, world, args, timeout=None):
    """`world` spawned processes each running measure(rank, world, args, barrier, queue), which puts (rank, result)
    on the queue; the results in rank order. A rank that dies or hangs past `timeout` stops its peers."""
    context = mp.get_context("spawn")
    barrier, queue = context.Barrier(world), context.Queue()
    procs = [context.Process(target=measure, args=(r, world, args, barrier, queue)) for r in range(world)]
    for p in procs:
        p.start()
    try:
        per_rank = dict(queue.get(timeout=timeout) for _ in procs)
    except Exception:  # noqa: BLE001 (a rank died or hung: stop its peers and say which)
        for p in procs:
            p.kill()
        raise SystemExit(f"N={world}: a rank failed (exit codes {[p.exitcode for p in procs]})")
    for p in procs:
        p.join()
    return [per_rank[r] for r in range(world)]


def measure(rank, world, args, barrier, queue):
    device, sync = start_rank(rank, world, args.device, args.port + world)
    dtype = getattr(torch, args.dtype)
    results = {}

    def run(name, fn, ops):
        barrier.wait()
        forward, backward = forward_and_backward(fn, args.iters, args.repeats, sync, ops)
        results[name + "_forward_per_op"], results[name + "_backward_per_op"] = forward, backward

    for name, (fn, ops) in layer_cases(device, args.rows, args.width, dtype).items():
        run("layer_" + name, fn, ops)
    for name, (fn, ops) in sized_op_cases(device, args.rows, args.width, dtype).items():
        run(name, fn, ops)
    x = torch.randn(args.rows, args.width, device=device, dtype=dtype, requires_grad=True)
    for count in CHUNK_COUNTS:
        run(f"sort_chunks_{count}", lambda count=count: sort_chunks(x, count), 1)
    run("autograd_function", lambda: _ViewFunction.apply(x), 1)
    if world > 1:
        send = torch.randn(args.rows, args.width, device=device, dtype=dtype)
        recv = torch.empty_like(send)
        splits = [args.rows // world] * world

        def all_to_all():
            dist.all_to_all_single(recv, send, splits, splits, async_op=True).wait()

        for _ in range(20):
            all_to_all()
        sync()
        barrier.wait()
        # Collectives cannot pile up without bound: each repeat's calls drain before the next repeat.
        results["all_to_all"] = {k: v for k, v in time_case(all_to_all, args.iters, args.repeats, sync,
                                                              issue_only=True).items() if k != "samples"}
        dist.destroy_process_group()
    queue.put((rank, results))


def summary(per_rank):
    keys = per_rank[0].keys()
    return {k: {stat: statistics.mean(r[k][stat] for r in per_rank) for stat in ("p50", "min")} for k in keys}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2,4", help="comma-separated process counts, each run in turn")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    parser.add_argument("--port", type=int, default=29620)
    parser.add_argument("--timeout", type=float, default=240, help="seconds to wait for each N's ranks")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: a smoke test of the tool (gloo, CPU tensors), not a measurement")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    counts = [int(n) for n in args.processes.split(",")]
    if args.device == "cuda" and max(counts) > torch.cuda.device_count():
        parser.error(f"--processes {args.processes}: this machine has {torch.cuda.device_count()} GPUs")
    runs = []
    for world in counts:
        ranks = run_ranks(measure, world, args, args.timeout)
        runs.append({"processes": world, "ranks": ranks, "mean_over_ranks": summary(ranks)})
        for key, value in runs[-1]["mean_over_ranks"].items():
            print(f"N={world} {key:34s} {value['p50']:8.2f} us (min {value['min']:.2f})", flush=True)
    record = {"schema_version": 1, "tool": "moesim-torch-host-costs", "unit": "us_per_op",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpu_model": cpu_model(),
              "cpus": os.cpu_count(), "device": args.device,
              "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None, "torch": torch.__version__,
              "python": platform.python_version(), "iters": args.iters, "repeats": args.repeats,
              "rows": args.rows, "width": args.width, "dtype": args.dtype, "chunk_counts": list(CHUNK_COUNTS),
              "runs": runs}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
