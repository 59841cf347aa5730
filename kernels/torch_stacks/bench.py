"""Runs one configuration: builds the stack, times it, traces it if asked, and returns its record."""
import gzip
import os
import shutil
import traceback

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from . import provenance as prov
from .experts import grouped_gemm_impl
from .layers import TORCH_DTYPES
from .model_spec import load_layer_shape, scaled
from .routing import forced_assignment, layer_seed, parse_routing
from .stack import MoeStack
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
    """The timed step: forward (autograd recording, as training's) or forward + backward, no optimizer."""
    params = [p for p in module.parameters() if p.requires_grad]

    def step():
        with record_function("moesim.step"):
            if cfg.phase == "train":
                for p in params:
                    p.grad = None
            with record_function("moesim.forward"):
                y = forward(x)
            if cfg.phase == "train":
                with record_function("moesim.backward"):
                    y.backward(grad)
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


def run_config(cfg, ctx, out_dir, builder, specs=None):
    """Measures cfg on every rank of ctx; returns the record on rank 0 (None elsewhere)."""
    name = cfg.name(ctx.world)
    record = {"schema_version": SCHEMA_VERSION, "kind": "moesim-torch-stack-run", "name": name,
              "provenance": prov.provenance(), "config": dict(cfg.as_dict(), ep=ctx.world)}
    rank_result = {"rank": ctx.rank}
    try:
        shape = scaled(load_layer_shape(model_path(cfg.model, specs)), cfg.scale)
        repo = os.path.join(specs_dir(), "..", "..")
        record["config"]["model_file"] = os.path.relpath(model_path(cfg.model, specs), repo)
        record["config"]["shape"] = {"hidden": shape.hidden, "attention": vars(shape.attention),
                                     "experts": shape.experts, "top_k": shape.top_k, "expert_ffn": shape.expert_ffn,
                                     "shared_experts": shape.shared_experts, "shared_ffn": shape.shared_ffn}
        torch.manual_seed(cfg.seed * 31 + ctx.rank)
        module, forward, info = builder(cfg, shape, ctx)
        record["config"].update(info)
        dtype = TORCH_DTYPES[cfg.dtype]
        gen = torch.Generator(device=ctx.device).manual_seed(cfg.seed * 131 + ctx.rank)
        x = torch.randn(cfg.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
        grad = torch.randn(cfg.tokens, shape.hidden, generator=gen, device=ctx.device, dtype=torch.float32).to(dtype)
        step = make_step(module, forward, cfg, x, grad)
        rank_result["gpu_before"] = prov.gpu_state(ctx.device)
        rank_result.update(time_steps(step, ctx, cfg.warmup, cfg.iters))
        rank_result["gpu_after"] = prov.gpu_state(ctx.device)
        if ctx.is_cuda:
            rank_result["max_memory_MiB"] = torch.cuda.max_memory_allocated(ctx.device) // 2**20
        if cfg.trace_iters:
            trace = os.path.join(out_dir, f"{name}.rank{ctx.rank}.trace.json.gz")
            rank_result["trace"] = trace_steps(step, ctx, cfg, trace)
        rank_result["status"] = "ok"
    except Exception as e:  # noqa: BLE001 (a failed config is recorded, the matrix goes on)
        rank_result["status"] = "failed"
        rank_result["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
        rank_result["traceback"] = traceback.format_exc()[-2000:]
    finally:
        module = forward = step = x = grad = None  # noqa: F841 (free the GPU memory before the next config)
        if ctx.is_cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(ctx.device)
    ranks = ctx.gather(rank_result)
    if ctx.rank != 0:
        return None
    return finish_record(record, ranks)


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


def native_builder(cfg, shape, ctx):
    stack, expert_rows = build_native(cfg, shape, ctx)
    info = {"implementation": "moesim-torch-stacks", "grouped_gemm": grouped_gemm_impl(ctx.device)
            if cfg.style == "grouped" else None, "expert_rows_rank0": expert_rows}
    return stack, stack, info
