#!/usr/bin/env python3
"""How much an eager op's host time varies from call to call, and what that costs ranks that meet at a collective.

Host-bound ranks of an expert-parallel stack meet at every collective whose result the host needs (the split-size
exchange's counts go to the host): each segment between two such syncs lasts as long as the slowest rank takes to
issue it. With the same mean host cost on every rank, the step still grows with the spread of that cost. N
processes (one per GPU, NCCL; gloo on the CPU), each `--rounds` segments of:
  - the ops of torch_step_context's pool once each (tiny tensors: the host sets the pace), every call timed on its
    own (perf_counter_ns);
  - a sync as the split-size exchange does it: all_to_all_single of one count per rank, then .tolist() (with
    `--group never`, .tolist() alone: the processes then share the host but no process group).
The record gives per rank and pooled: each call's excess over its op's median, and over its op's minimum,
(quantiles, mean), the segment's issue time and its wait at the sync; and per segment the slowest rank's issue
time over the ranks' mean (what the sync makes every rank pay), as quantiles and mean over segments.

    python3 kernels/tools/torch_host_jitter.py --processes 4 --out host-jitter.json
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from torch_dispatch_bench import record_header
from torch_host_costs import run_ranks, start_rank
from torch_step_context import op_pool

QUANTILES = (0.5, 0.9, 0.95, 0.99)


def quantiles(values):
    ordered = sorted(values)
    out = {f"p{round(q * 100)}": ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in QUANTILES}
    out["mean"] = statistics.fmean(ordered)
    return out


def measure(rank, world, args, barrier, queue):
    grouped = args.group == "always" or (args.group == "auto" and world > 1)
    device, sync = start_rank(rank, world if grouped else 1, args.device, args.port)
    if grouped and world == 1:  # a process group of one: its background threads without peers
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(args.port)
        dist.init_process_group("nccl" if args.device == "cuda" else "gloo", rank=0, world_size=1)
    torch.manual_seed(rank)
    pool = [fn for _, fn in op_pool(device, 8, 16, torch.float32)]
    x = torch.randn(8, 16, device=device)
    send = torch.full((world,), rank, device=device, dtype=torch.int64)
    recv = torch.empty_like(send)
    calls = [[] for _ in pool]
    issue, wait = [], []
    for round_ in range(args.warmup + args.rounds):
        sync()
        barrier.wait()
        times = []
        for fn in pool:
            start = time.perf_counter_ns()
            fn(x)
            times.append((time.perf_counter_ns() - start) / 1e3)
        start = time.perf_counter_ns()
        if grouped:
            dist.all_to_all_single(recv, send)
        recv.tolist()
        waited = (time.perf_counter_ns() - start) / 1e3
        if round_ >= args.warmup:
            for samples, t in zip(calls, times):
                samples.append(t)
            issue.append(sum(times))
            wait.append(waited)
    medians = [statistics.median(s) for s in calls]
    minimums = [min(s) for s in calls]
    over_median = [t - m for s, m in zip(calls, medians) for t in s]
    over_min = [t - m for s, m in zip(calls, minimums) for t in s]
    if grouped:
        dist.destroy_process_group()
    queue.put((rank, {"op_median_us": statistics.fmean(medians), "op_min_us": statistics.fmean(minimums),
                      "excess_over_median_us": quantiles(over_median), "excess_over_min_us": quantiles(over_min),
                      "issue_us": issue, "wait_us": wait, "excess_over_median_samples": over_median,
                      "excess_over_min_samples": over_min}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--port", type=int, default=29751)
    parser.add_argument("--group", default="auto", choices=("auto", "always", "never"),
                        help="a process group (NCCL; gloo on the CPU): with more than one process (auto), always (also "
                             "for one), never (the sync is the host copy alone)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    world = args.processes
    ranks = run_ranks(measure, world, args)
    slowest_over_mean = [max(r["issue_us"][i] for r in ranks) / statistics.fmean(r["issue_us"][i] for r in ranks)
                         for i in range(args.rounds)]
    pooled = {key: quantiles([v for r in ranks for v in r[key + "_samples"]])
              for key in ("excess_over_median", "excess_over_min")}
    summary = {"ops_per_segment": len(op_pool(torch.device("cpu"), 8, 16, torch.float32)),
               "op_median_us": statistics.fmean(r["op_median_us"] for r in ranks),
               "op_min_us": statistics.fmean(r["op_min_us"] for r in ranks),
               "excess_over_median_us": pooled["excess_over_median"], "excess_over_min_us": pooled["excess_over_min"],
               "segment_issue_us": quantiles([v for r in ranks for v in r["issue_us"]]),
               "segment_wait_us": quantiles([v for r in ranks for v in r["wait_us"]]),
               "slowest_issue_over_mean": quantiles(slowest_over_mean)}
    for r in ranks:
        for key in ("excess_over_median_samples", "excess_over_min_samples"):
            del r[key]
    print(f"{world} ranks, {summary['ops_per_segment']} ops per segment: op median {summary['op_median_us']:.2f} us "
          f"(min {summary['op_min_us']:.2f}); excess over the op's median p50/p95/p99/mean "
          + "/".join(f"{summary['excess_over_median_us'][k]:.2f}" for k in ("p50", "p95", "p99", "mean"))
          + " us; over its min " + "/".join(f"{summary['excess_over_min_us'][k]:.2f}" for k in ("p50", "p95", "p99", "mean"))
          + f" us; segment issue p50 {summary['segment_issue_us']['p50']:.1f} us, wait p50 "
          f"{summary['segment_wait_us']['p50']:.1f} us; slowest rank's issue over the mean: mean "
          f"{summary['slowest_issue_over_mean']['mean']:.3f}, p95 {summary['slowest_issue_over_mean']['p95']:.3f}")
    record = record_header("moesim-torch-host-jitter", device=args.device,
                           gpu=torch.cuda.get_device_name() if args.device == "cuda" else None, processes=world,
                           rounds=args.rounds, warmup=args.warmup, group=args.group, summary=summary, ranks=ranks)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
