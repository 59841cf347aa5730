"""Runs one configuration: builds the stack, times it, traces it if asked, and returns its record."""
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
    returns the host clock (time.perf_counter) when its forward returned."""
    params = [p for p in module.parameters() if p.requires_grad]

    def step():
        with record_function("moesim.step"):
            if cfg.phase == "train":
                for p in params:
                    p.grad = None
            with record_function("moesim.forward"):
                y = forward(x)
            forward_returned = time.perf_counter()
            if cfg.phase == "train":
                with record_function("moesim.backward"):
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
    with profile(activities=activities, record_shapes=True,
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


def run_configs(cfgs, ctx, out_dir, builder, specs=None):
    """Measures one configuration, or a regular/farskip pair (configurations equal but for the schedule)
    interleaved on one stack built once, so both schedules run the same weights, inputs and routing; returns
    one record per configuration on rank 0 (None elsewhere). A pair's records carry the speedup and its
    bootstrap interval (timing.speedup) and name each other (pair)."""
    first = cfgs[0]
    records = [{"schema_version": SCHEMA_VERSION, "kind": "moesim-torch-stack-run", "name": c.name(ctx.world),
                "provenance": prov.provenance(), "config": dict(c.as_dict(), ep=ctx.world)} for c in cfgs]
    results = [{"rank": ctx.rank} for _ in cfgs]
    try:
        shape = scaled(load_layer_shape(model_path(first.model, specs)), first.scale)
        repo = os.path.join(specs_dir(), "..", "..")
        common = {"model_file": os.path.relpath(model_path(first.model, specs), repo),
                  "shape": {"hidden": shape.hidden, "attention": vars(shape.attention), "experts": shape.experts,
                            "top_k": shape.top_k, "expert_ffn": shape.expert_ffn,
                            "shared_experts": shape.shared_experts, "shared_ffn": shape.shared_ffn}}
        torch.manual_seed(first.seed * 31 + ctx.rank)
        module, forward, info = builder(first, shape, ctx)
        for record in records:
            record["config"].update(common, **info)
        dtype = TORCH_DTYPES[first.dtype]
        gen = torch.Generator(device=ctx.device).manual_seed(first.seed * 131 + ctx.rank)
        x = torch.randn(first.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
        grad = torch.randn(first.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
        forwards = [forward] if len(cfgs) == 1 else [functools.partial(module.run, schedule=c.schedule) for c in cfgs]
        steps = [make_step(module, f, c, x, grad) for f, c in zip(forwards, cfgs)]
        before = prov.gpu_state(ctx.device)
        timings = time_steps(steps, ctx, first.warmup, first.iters, make_probe(ctx.device))
        after = prov.gpu_state(ctx.device)
        for result, timing in zip(results, timings):
            result.update(gpu_before=before, **timing, gpu_after=after)
            if ctx.is_cuda:
                result["max_memory_MiB"] = torch.cuda.max_memory_allocated(ctx.device) // 2**20
        for result, step, c, record in zip(results, steps, cfgs, records):
            if c.trace_iters:
                trace = os.path.join(out_dir, f"{record['name']}.rank{ctx.rank}.trace.json.gz")
                result["trace"] = trace_steps(step, ctx, c, trace)
            result["status"] = "ok"
    except Exception as e:  # noqa: BLE001 (a failed config is recorded, the matrix goes on)
        for result in results:
            result["status"] = "failed"
            result["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
            result["traceback"] = traceback.format_exc()[-2000:]
    finally:
        module = forward = forwards = steps = x = grad = None  # noqa: F841 (free the GPU memory before the next)
        if ctx.is_cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(ctx.device)
    gathered = [ctx.gather(result) for result in results]
    if ctx.rank != 0:
        return None
    records = [finish_record(record, ranks) for record, ranks in zip(records, gathered)]
    if len(records) == 2:
        pair_records(*records)
    return records


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
