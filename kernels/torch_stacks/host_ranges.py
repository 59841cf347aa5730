"""Host time of every op range, untraced and under the profiler, in one run of torch_stacks.run.

    python3 -m torch_stacks.launch --nproc 4 --module torch_stacks.host_ranges -- --model qwen3-30b-a3b \\
        --style grouped --phase train --trace-iters 1 --out DIR

Runs torch_stacks.run with its op ranges (`moesim.L<layer>.<op>`) also timed on the host by
time.perf_counter_ns, from entering the range to leaving it, in every step: the warm-up and timed steps run
untraced, the last trace-iters + 1 run under the profiler (the first of them its warm-up). Rank 0 writes
DIR/host-ranges.json, every other rank R DIR/host-ranges.rank<R>.json: per step, whether profiled, each range's
host microseconds, and a timeline of [event, perf_counter_ns] where an event is a range's entry ("L0.permute>"),
its exit ("L0.permute<") or a mark inside it (torch_stacks.marks: the steps of the expert-parallel path).
perf_counter_ns reads CLOCK_MONOTONIC, one clock for every process of a host, so ranks' timelines compare: when
each rank reached a collective, and when the last one did. The learner
(`moesim calibrate --torch-trace`) scales a trace's host gaps by one factor per step (untraced issue time over
traced); these ranges say how far each op's own factor is from that one.
"""
import json
import os
import sys
import time
from contextlib import contextmanager

from torch.profiler import record_function

from . import bench, marks, run, stack

_steps = []


@contextmanager
def _timed_range(layer, name):
    start = time.perf_counter_ns()
    _record(f"L{layer}.{name}>", start)
    with record_function(f"moesim.L{layer}.{name}"):
        yield
    end = time.perf_counter_ns()
    _record(f"L{layer}.{name}<", end)
    if _steps:
        _steps[-1]["ranges"].append([f"L{layer}.{name}", (end - start) / 1e3])


def _record(event, ns=None):
    if _steps:
        _steps[-1]["timeline"].append([event, time.perf_counter_ns() if ns is None else ns])


def _timed_make_step(make_step):
    def make(module, forward, cfg, x, grad):
        step = make_step(module, forward, cfg, x, grad)

        def timed():
            _steps.append({"ranges": [], "timeline": []})
            start = time.perf_counter_ns()
            _record("step>", start)
            step()
            _steps[-1]["issue_us"] = (time.perf_counter_ns() - start) / 1e3
        return timed
    return make


def main(argv):
    out = argv[argv.index("--out") + 1]
    trace_iters = int(argv[argv.index("--trace-iters") + 1]) if "--trace-iters" in argv else 0
    stack.op_range = _timed_range
    marks.sink = _record
    bench.make_step = _timed_make_step(bench.make_step)
    code = run.main(argv)
    rank = int(os.environ.get("RANK", "0"))
    profiled = trace_iters + 1 if trace_iters else 0
    for i, s in enumerate(_steps):
        s["profiled"] = i >= len(_steps) - profiled
    name = "host-ranges.json" if rank == 0 else f"host-ranges.rank{rank}.json"
    with open(os.path.join(out, name), "w") as f:
        json.dump({"argv": argv, "rank": rank, "steps": _steps}, f)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
