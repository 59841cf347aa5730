"""Warm-up, then timed steps: CUDA events around each step on the compute stream, host clocks beside them.

Each timed step starts from idle GPUs: a barrier over the ranks and a device synchronisation come first, so
a step's time includes the host's launch of its first kernels, as a training step's does.
  gpu_ms    CUDA event time from the step's first launch to its end (the host's time on the CPU)
  issue_ms  host time until the step's Python returned (all kernels launched; host-bound when ~gpu_ms)
  forward_issue_ms  host time until its forward returned (a step function that returns the
            time.perf_counter() of that moment); a profiler inflates forward and backward issue unequally,
            so a trace's host costs are scaled per pass by these
  wall_ms   host time until the GPU finished
  host_probe_us  after each timed step, outside it: host_probe's microseconds per eager op (how fast the
            process issued ops at that moment)
"""
import statistics
import time

import torch


def summary(values):
    return {"p50": statistics.median(values), "min": min(values), "max": max(values)}


def _timed_step(step, ctx):
    """One step from idle GPUs: (gpu_ms, issue_ms, wall_ms, forward_issue_ms); the last is issue_ms when
    the step does not say when its forward returned."""
    ctx.barrier()
    start_host = time.perf_counter()
    if ctx.is_cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    forward_returned = step()
    issued = time.perf_counter()
    if ctx.is_cuda:
        end.record()
        end.synchronize()
    done = time.perf_counter()
    wall, issue = (done - start_host) * 1e3, (issued - start_host) * 1e3
    forward_issue = issue if forward_returned is None else (forward_returned - start_host) * 1e3
    return (start.elapsed_time(end) if ctx.is_cuda else wall), issue, wall, forward_issue


def time_steps(steps, ctx, warmup, iters, probe=None):
    """Times each step function of `steps` iters times; per step {"gpu_ms", "issue_ms", "wall_ms",
    "forward_issue_ms"} and, with a probe (host_probe.make_probe), "host_probe_us".

    Several steps (a regular/farskip pair on one stack) are interleaved, in the order ABBA ABBA...: every
    warm-up round runs each step once, timed round i runs them in order, reversed when i is odd. Whatever
    drifts during the run (clocks, temperature, other work on the host) then falls on both alike, and
    neither always follows the other.
    """
    for _ in range(warmup):
        for step in steps:
            step()
    ctx.synchronize()
    keys = ("gpu_ms", "issue_ms", "wall_ms", "forward_issue_ms")
    out = [{key: [] for key in keys + (("host_probe_us",) if probe else ())} for _ in steps]
    for i in range(iters):
        order = range(len(steps)) if i % 2 == 0 else reversed(range(len(steps)))
        for k in order:
            for key, value in zip(keys, _timed_step(steps[k], ctx)):
                out[k][key].append(value)
            if probe:
                out[k]["host_probe_us"].append(probe())
    return out


def step_summary(per_rank):
    """Per iteration the slowest rank's gpu_ms (a step ends when its last rank does); p50/min/max of those."""
    slowest = [max(r["gpu_ms"][i] for r in per_rank) for i in range(len(per_rank[0]["gpu_ms"]))]
    return dict(summary(slowest), per_iteration=slowest)
