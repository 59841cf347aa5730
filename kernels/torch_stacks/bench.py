"""Runs one configuration: builds the stack, times it and returns its record; traces it when asked."""
import contextlib
import functools
import gzip
import os
import shutil
import time
import traceback

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from . import provenance as prov
from .experts import grouped_gemm_impl
from .host_probe import make_probe
from .layers import TORCH_DTYPES
from .model_spec import load_layer_shape, scaled
from .routing import forced_assignment, layer_seed, parse_routing
from .stack import MoeStack
from .speedup import speedup_summary
from .timing import step_summary, summary, time_steps

SCHEMA_VERSION = 1


def specs_dir():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "specs")


def model_path(name, directory=None):
    return name if name.endswith(".json") else os.path.join(directory or specs_dir(), f"{name}.json")


def build_native(cfg, shape, ctx):
    kind, exponent = parse_routing(cfg.routing)
    assignments = [forced_assignment(kind, exponent, cfg.tokens, shape.experts, shape.top_k,
                                     layer_seed(cfg.seed, layer, ctx.rank)) for layer in range(cfg.layers)]
    assignments = [a.to(ctx.device) if a is not None else None for a in assignments]
    dtype = TORCH_DTYPES[cfg.dtype]
    stack = MoeStack(shape, cfg.style, cfg.schedule, cfg.layers, cfg.seq, ctx.world, ctx.rank, None, dtype,
                     ctx.device, cfg.seed * 7919, assignments)
    expert_rows = [torch.bincount(a.flatten().cpu(), minlength=shape.experts).tolist()
                   for a in assignments if a is not None]
    return stack, expert_rows


def make_step(module, forward, cfg, x, grad):
    """The timed step: forward (autograd recording, as training's) or forward + backward, no optimizer;
    returns the host clock (time.perf_counter) when its forward returned. A plain-trace configuration's step
    carries no moesim ranges, as a user's own training loop does not."""
    params = [p for p in module.parameters() if p.requires_grad]
    marked = record_function if not cfg.plain_trace else (lambda name: contextlib.nullcontext())

    def step():
        with marked("moesim.step"):
            if cfg.phase == "train":
                for p in params:
                    p.grad = None
            with marked("moesim.forward"):
                y = forward(x)
            forward_returned = time.perf_counter()
            if cfg.phase == "train":
                with marked("moesim.backward"):
                    y.backward(grad)
        return forward_returned
    return step


def trace_steps(step, ctx, cfg, path):
    """Profiles cfg.trace_iters steps after one profiled warm-up step; writes path (gzip) on traced ranks."""
    traced = cfg.trace_all_ranks or ctx.rank == 0
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if ctx.is_cuda else [])
    raw = path[:-3]
    if not traced:
        for _ in range(cfg.trace_iters + 1):
            ctx.barrier()
            step()
        ctx.synchronize()
        return None
    # A plain trace is what `profile(with_stack=True)` gives a user: the Python tracer's "nn.Module: Class_N"
    # events show which module launched what.
    with profile(activities=activities, record_shapes=True, with_stack=cfg.plain_trace,
                 schedule=schedule(wait=0, warmup=1, active=cfg.trace_iters),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(cfg.trace_iters + 1):
            ctx.barrier()
            step()
            ctx.synchronize()
            prof.step()
    with open(raw, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    return os.path.basename(path)


def build_steps(cfgs, ctx, builder, specs=None):
    """The stack of `cfgs` (one configuration, or a regular/farskip pair on one stack) and a step per
    configuration; returns (module, steps, the record's config additions)."""
    first = cfgs[0]
    shape = scaled(load_layer_shape(model_path(first.model, specs)), first.scale)
    repo = os.path.join(specs_dir(), "..", "..")
    common = {"model_file": os.path.relpath(model_path(first.model, specs), repo),
              "shape": {"hidden": shape.hidden, "attention": vars(shape.attention), "experts": shape.experts,
                        "top_k": shape.top_k, "expert_ffn": shape.expert_ffn,
                        "shared_experts": shape.shared_experts, "shared_ffn": shape.shared_ffn,
                        "shared_gate": shape.shared_gate}}
    torch.manual_seed(first.seed * 31 + ctx.rank)
    module, forward, info = builder(first, shape, ctx)
    dtype = TORCH_DTYPES[first.dtype]
    gen = torch.Generator(device=ctx.device).manual_seed(first.seed * 131 + ctx.rank)
    x = torch.randn(first.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
    grad = torch.randn(first.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
    forwards = [forward] if len(cfgs) == 1 else [functools.partial(module.run, schedule=c.schedule) for c in cfgs]
    steps = [make_step(module, f, c, x, grad) for f, c in zip(forwards, cfgs)]
    return module, steps, dict(common, **info)


def free_memory(ctx):
    if ctx.is_cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(ctx.device)


def run_configs(cfgs, ctx, builder, specs=None):
    """Measures one configuration, or a regular/farskip pair (configurations equal but for the schedule)
    interleaved on one stack built once, so both schedules run the same weights, inputs and routing; returns
    one record per configuration on rank 0 (None elsewhere). A pair's records carry the speedup and its
    bootstrap interval (timing.speedup) and name each other (pair). Traces come from trace_configs, run after
    every timing of the process: a process that has run the profiler issues its steps slower afterwards
    (data/calibration/2026-11-28-nvidia-h200-profiler-aftermath)."""
    first = cfgs[0]
    records = [{"schema_version": SCHEMA_VERSION, "kind": "moesim-torch-stack-run", "name": c.name(ctx.world),
                "provenance": prov.provenance(), "config": dict(c.as_dict(), ep=ctx.world, trace_iters=0,
                                                                trace_all_ranks=False)} for c in cfgs]
    results = [{"rank": ctx.rank} for _ in cfgs]
    try:
        module, steps, added = build_steps(cfgs, ctx, builder, specs)
        for record in records:
            record["config"].update(added)
        before = prov.gpu_state(ctx.device)
        timings = time_steps(steps, ctx, first.warmup, first.iters, make_probe(ctx.device))
        after = prov.gpu_state(ctx.device)
        for result, timing in zip(results, timings):
            result.update(gpu_before=before, **timing, gpu_after=after)
            if ctx.is_cuda:
                result["max_memory_MiB"] = torch.cuda.max_memory_allocated(ctx.device) // 2**20
            result["status"] = "ok"
    except Exception as e:  # noqa: BLE001 (a failed config is recorded, the matrix goes on)
        for result in results:
            result["status"] = "failed"
            result["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
            result["traceback"] = traceback.format_exc()[-2000:]
    finally:
        module = steps = None  # noqa: F841 (free the GPU memory before the next)
        free_memory(ctx)
    gathered = [ctx.gather(result) for result in results]
    if ctx.rank != 0:
        return None
    records = [finish_record(record, ranks) for record, ranks in zip(records, gathered)]
    if len(records) == 2:
        pair_records(*records)
    return records


def trace_configs(cfgs, ctx, out_dir, builder, specs=None):
    """Traces the configurations of `cfgs` that ask for it (trace_iters) on a stack built again as run_configs
    built it, after its warm-up steps; returns on rank 0, per configuration, the traced ranks' trace files (an
    empty list where none), or the error that stopped it (a str); None elsewhere."""
    first = cfgs[0]
    result = {"rank": ctx.rank, "traces": [None] * len(cfgs)}
    try:
        module, steps, _ = build_steps(cfgs, ctx, builder, specs)
        for _ in range(first.warmup):
            for step in steps:
                step()
        ctx.synchronize()
        for i, (step, c) in enumerate(zip(steps, cfgs)):
            if c.trace_iters:
                trace = os.path.join(out_dir, f"{c.name(ctx.world)}.rank{ctx.rank}.trace.json.gz")
                result["traces"][i] = trace_steps(step, ctx, c, trace)
    except Exception as e:  # noqa: BLE001 (the records stand without their traces)
        result["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
    finally:
        module = steps = None  # noqa: F841
        free_memory(ctx)
    ranks = ctx.gather(result)
    if ctx.rank != 0:
        return None
    failed = [r for r in ranks if r.get("error")]
    if failed:
        return [f"rank {failed[0]['rank']}: {failed[0]['error']}"] * len(cfgs)
    return [[r["traces"][i] for r in ranks if r["traces"][i]] for i in range(len(cfgs))]


def add_traces(record, cfg, traces):
    """The record of `cfg` with its traces (trace_configs' list for it): config.trace_iters, traces, and each
    traced rank's trace."""
    record["config"].update(trace_iters=cfg.trace_iters, trace_all_ranks=cfg.trace_all_ranks)
    record["traces"] = traces
    for rank in record["ranks"]:
        name = f"{record['name']}.rank{rank['rank']}.trace.json.gz"
        if name in traces:
            rank["trace"] = name
    return record


def finish_record(record, ranks):
    failed = [r for r in ranks if r["status"] != "ok"]
    record["status"] = "failed" if failed else "ok"
    if failed:
        record["error"] = f"rank {failed[0]['rank']}: {failed[0]['error']}"
    else:
        for r in ranks:
            r["summary_ms"] = summary(r["gpu_ms"])
        record["timing"] = {"unit": "ms", "step": step_summary(ranks)}
        traces = [r["trace"] for r in ranks if r.get("trace")]
        record["traces"] = traces
    record["ranks"] = ranks
    return record


def pair_records(regular, farskip):
    """An interleaved pair's records: each names the other; both carry the speedup of the pair."""
    regular["pair"], farskip["pair"] = farskip["name"], regular["name"]
    if regular["status"] == farskip["status"] == "ok":
        speedup = speedup_summary(regular["timing"]["step"]["per_iteration"],
                                  farskip["timing"]["step"]["per_iteration"])
        regular["timing"]["speedup"] = farskip["timing"]["speedup"] = speedup


def native_builder(cfg, shape, ctx):
    stack, expert_rows = build_native(cfg, shape, ctx)
    info = {"implementation": "moesim-torch-stacks", "grouped_gemm": grouped_gemm_impl(ctx.device)
            if cfg.style == "grouped" else None, "expert_rows_rank0": expert_rows}
    return stack, stack, info
