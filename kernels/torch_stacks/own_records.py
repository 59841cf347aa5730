"""Records of your own model's steps in the torch_stacks format, so that moesim reads them as it reads the stacks':

    moesim validate --measured DIR [--impl PROFILE] [--steps]     # predicted vs measured, per op with a trace
    moesim calibrate --torch-trace DIR/NAME.rank0.trace.json.gz ... # the record beside a trace gives its run

A record names the moesim model spec you wrote for the model (`config.model_spec`, relative to the record's
folder): moesim simulates the layers that spec says (dense ones included), at the widths it gives. Timings come
from annotate.timed_steps or profile_step (CUDA events around each step, the host probe after it). Time the
configurations you compare against before the one you profile: a process that has run the profiler issues its
steps slower afterwards, and its probe reads higher still (data/calibration/2026-11-28-nvidia-h200-profiler-aftermath).

    from torch_stacks.annotate import annotate, profile_step
    from torch_stacks.own_records import record_name, trace_path, write_record
    annotate(model)
    where = dict(tokens=4096, seq=4096, layers=2, phase="train")
    run = profile_step(forward, backward, trace=trace_path("out", "my-model.json", "grouped", **where))
    write_record("out", "my-model.json", "grouped", run["timing"], trace=run["trace"], **where)

With expert parallelism (torchrun, one process per GPU, the experts' all-to-all inside your model) every process
passes the run's distributed.RunContext (`ctx=`) to profile_step/timed_steps, trace_path and write_record: the
record then holds every rank's steps (a step ends when its slowest rank does) at EP = the processes' count, and
rank 0 writes it. The tokens are per rank.

`style` says how the model runs its experts, which picks the shipped profile moesim compares with: `loop` (a
Python loop over the experts hit), `grouped` (permute, grouped GEMM, unpermute), or transformers' own
`hf-eager` / `hf-grouped_mm`. A record runs the regular schedule.
"""
import json
import os

from . import provenance as prov
from .config import RunConfig
from .model_spec import load_layer_shape, spec_from_record_folder
from .timing import step_summary, summary

SCHEMA_VERSION = 1


def _world(ctx):
    return 1 if ctx is None else ctx.world


def _config(spec_path, style, tokens, seq, layers, phase, routing, **timing_args):
    return RunConfig(model=load_layer_shape(spec_path).name, style=style, phase=phase, tokens=tokens, seq=seq,
                     layers=layers, routing=routing, **timing_args).validate()


def record_name(spec_path, style, tokens, seq, layers, phase, routing="natural", ctx=None):
    """The record's name (its file is NAME.json), as the stacks name theirs."""
    return _config(spec_path, style, tokens, seq, layers, phase, routing).name(_world(ctx))


def trace_path(out_dir, spec_path, style, tokens, seq, layers, phase, routing="natural", ctx=None):
    """Where this process's traced step goes for moesim to find its record beside it: OUT/NAME.rankR.trace.json.gz."""
    name = record_name(spec_path, style, tokens, seq, layers, phase, routing, ctx)
    return os.path.join(out_dir, f"{name}.rank{0 if ctx is None else ctx.rank}.trace.json.gz")


def write_record(out_dir, spec_path, style, timing, *, tokens, seq, layers, phase, routing="natural", dtype="bf16",
                 trace=None, extra=None, ctx=None):
    """Writes OUT_DIR/NAME.json from a timed_steps result (`timing`) and returns its path (None on ranks other
    than 0). `trace`: this process's traced step, at trace_path(...). `extra`: more config keys (what you ran:
    framework, versions of your code)."""
    steps = timing["per_step"]
    cfg = _config(spec_path, style, tokens, seq, layers, phase, routing, dtype=dtype, iters=len(steps["gpu_ms"]),
                  warmup=timing["warmup"], trace_iters=1 if trace else 0)
    where = dict(tokens=tokens, seq=seq, layers=layers, phase=phase, routing=routing, ctx=ctx)
    expected = trace_path(out_dir, spec_path, style, **where)
    if trace and os.path.abspath(trace) != os.path.abspath(expected):
        raise ValueError(f"write_record: trace {trace}: expected {expected} "
                         "(moesim reads the record beside its trace by name)")
    rank = dict(rank=0 if ctx is None else ctx.rank, status="ok", gpu_before=timing["gpu_before"], **steps,
                gpu_after=timing["gpu_after"], summary_ms=summary(steps["gpu_ms"]))
    if trace:
        rank["trace"] = os.path.basename(trace)
    ranks = [rank] if ctx is None else ctx.gather(rank)
    if ranks is None:
        return None
    shape = load_layer_shape(spec_path)
    config = dict(cfg.as_dict(), ep=len(ranks),
                  model_spec=spec_from_record_folder(spec_path, out_dir),
                  implementation="own model",
                  shape={"hidden": shape.hidden, "attention": vars(shape.attention), "experts": shape.experts,
                         "top_k": shape.top_k, "expert_ffn": shape.expert_ffn,
                         "shared_experts": shape.shared_experts, "shared_ffn": shape.shared_ffn})
    config.update(extra or {})
    name = cfg.name(len(ranks))
    record = {"schema_version": SCHEMA_VERSION, "kind": "moesim-torch-stack-run", "name": name,
              "provenance": prov.provenance(), "config": config, "status": "ok",
              "timing": {"unit": "ms", "step": step_summary(ranks)},
              "traces": [r["trace"] for r in ranks if "trace" in r], "ranks": ranks}
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    return path
