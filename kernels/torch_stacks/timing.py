"""Warm-up, then timed steps: CUDA events around each step on the compute stream, host clocks beside them.

Each timed step starts from idle GPUs: a barrier over the ranks and a device synchronisation come first, so
a step's time includes the host's launch of its first kernels, as a training step's does.
  gpu_ms    CUDA event time from the step's first launch to its end (the host's time on the CPU)
  issue_ms  host time until the step's Python returned (all kernels launched; host-bound when ~gpu_ms)
  wall_ms   host time until the GPU finished
"""
import statistics
import time

import torch


def summary(values):
    return {"p50": statistics.median(values), "min": min(values), "max": max(values)}


def time_steps(step, ctx, warmup, iters):
    for _ in range(warmup):
        step()
    ctx.synchronize()
    gpu, issue, wall = [], [], []
    for _ in range(iters):
        ctx.barrier()
        start_host = time.perf_counter()
        if ctx.is_cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        step()
        issued = time.perf_counter()
        if ctx.is_cuda:
            end.record()
            end.synchronize()
        done = time.perf_counter()
        wall.append((done - start_host) * 1e3)
        issue.append((issued - start_host) * 1e3)
        gpu.append(start.elapsed_time(end) if ctx.is_cuda else wall[-1])
    return {"gpu_ms": gpu, "issue_ms": issue, "wall_ms": wall}


def step_summary(per_rank):
    """Per iteration the slowest rank's gpu_ms (a step ends when its last rank does); p50/min/max of those."""
    slowest = [max(r["gpu_ms"][i] for r in per_rank) for i in range(len(per_rank[0]["gpu_ms"]))]
    return dict(summary(slowest), per_iteration=slowest)
