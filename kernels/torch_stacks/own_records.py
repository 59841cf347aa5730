"""Records of your own model's steps in the torch_stacks format, so that moesim reads them as it reads the stacks':

    moesim validate --measured DIR [--impl PROFILE] [--steps]     # predicted vs measured, per op with a trace
    moesim calibrate --torch-trace DIR/NAME.rank0.trace.json.gz ... # the record beside a trace gives its run

A record names the moesim model spec you wrote for the model (`config.model_spec`, relative to the record's
folder): moesim simulates the layers that spec says (dense ones included), at the widths it gives. Timings come
from annotate.timed_steps or profile_step (one process, CUDA events around each step, the host probe after it).

    from torch_stacks.annotate import annotate, profile_step
    from torch_stacks.own_records import record_name, write_record
    annotate(model)
    name = record_name("my-model.json", "grouped", tokens=4096, seq=4096, layers=2, phase="train")
    run = profile_step(forward, backward, trace=f"out/{name}.rank0.trace.json.gz")
    write_record("out", "my-model.json", "grouped", run["timing"], tokens=4096, seq=4096, layers=2, phase="train",
                 trace=run["trace"])

`style` says how the model runs its experts, which picks the shipped profile moesim compares with: `loop` (a
Python loop over the experts hit), `grouped` (permute, grouped GEMM, unpermute), or transformers' own
`hf-eager` / `hf-grouped_mm`. A record is one process (EP 1) running the regular schedule.
"""
import json
import os

from . import provenance as prov
from .config import RunConfig
from .model_spec import load_layer_shape
from .timing import step_summary, summary

SCHEMA_VERSION = 1


def record_name(spec_path, style, tokens, seq, layers, phase, routing="natural"):
    """The record's name (its file is NAME.json, its trace NAME.rank0.trace.json.gz), as the stacks name theirs."""
    return _config(spec_path, style, tokens, seq, layers, phase, routing).name(1)


def _config(spec_path, style, tokens, seq, layers, phase, routing, **timing_args):
    return RunConfig(model=load_layer_shape(spec_path).name, style=style, phase=phase, tokens=tokens, seq=seq,
                     layers=layers, routing=routing, **timing_args).validate()


def write_record(out_dir, spec_path, style, timing, *, tokens, seq, layers, phase, routing="natural", dtype="bf16",
                 trace=None, extra=None):
    """Writes OUT_DIR/NAME.json from a timed_steps result (`timing`) and returns its path. `trace`: the traced
    step's file, which must lie in out_dir (moesim finds a record beside its trace by name). `extra`: more
    config keys (what you ran: framework, versions of your code)."""
    shape = load_layer_shape(spec_path)
    steps = timing["per_step"]
    cfg = _config(spec_path, style, tokens, seq, layers, phase, routing, dtype=dtype, iters=len(steps["gpu_ms"]),
                  warmup=timing["warmup"], trace_iters=1 if trace else 0)
    name = cfg.name(1)
    traces = []
    if trace:
        if os.path.dirname(os.path.abspath(trace)) != os.path.abspath(out_dir) or \
                not os.path.basename(trace).startswith(f"{name}.rank"):
            raise ValueError(f"write_record: trace {trace}: expected {out_dir}/{name}.rank0.trace.json.gz "
                             "(moesim reads the record beside its trace by name)")
        traces.append(os.path.basename(trace))
    config = dict(cfg.as_dict(), ep=1, model_spec=os.path.relpath(os.path.abspath(spec_path), os.path.abspath(out_dir)),
                  implementation="own model",
                  shape={"hidden": shape.hidden, "attention": vars(shape.attention), "experts": shape.experts,
                         "top_k": shape.top_k, "expert_ffn": shape.expert_ffn,
                         "shared_experts": shape.shared_experts, "shared_ffn": shape.shared_ffn})
    config.update(extra or {})
    rank = dict(rank=0, status="ok", gpu_before=timing["gpu_before"], **steps, gpu_after=timing["gpu_after"],
                summary_ms=summary(steps["gpu_ms"]))
    record = {"schema_version": SCHEMA_VERSION, "kind": "moesim-torch-stack-run", "name": name,
              "provenance": prov.provenance(), "config": config, "status": "ok",
              "timing": {"unit": "ms", "step": step_summary([rank])}, "traces": traces, "ranks": [rank]}
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    return path
