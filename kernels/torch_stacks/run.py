"""Driver: measure one configuration or a named matrix, one JSON record per configuration.

  python3 -m torch_stacks.run --model qwen3-30b-a3b --style grouped --tokens 2048 --out DIR
  torchrun --nproc-per-node 4 -m torch_stacks.run --matrix device --out DIR --deadline 240

(run from kernels/, or with kernels/ on PYTHONPATH). EP is the number of processes torchrun starts.
"""
import argparse
import json
import os
import sys
import time

import torch.distributed as dist

from .bench import add_traces, model_path, native_builder, run_configs, trace_configs
from .config import HF_STYLES, MATRICES, NATIVE_STYLES, RunConfig, interleave, matrix
from .distributed import close_context, init_context
from .model_spec import spec_from_record_folder


def parse_args(argv):
    p = argparse.ArgumentParser(prog="torch_stacks.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matrix", help=f"run these named lists of configurations, comma-separated: {', '.join(MATRICES)}")
    p.add_argument("--model", help="moesim model name (models/specs/NAME.json) or a model file")
    p.add_argument("--style", choices=NATIVE_STYLES + HF_STYLES, default="grouped")
    p.add_argument("--schedule", choices=("regular", "farskip"), action="append",
                   help="regular (default) or farskip; both (given twice) with --interleave")
    p.add_argument("--phase", choices=("forward", "train"), default="forward")
    p.add_argument("--tokens", type=int, default=2048, help="tokens per rank")
    p.add_argument("--seq", type=int, default=2048, help="sequence length (divides tokens)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--routing", default="balanced", help="balanced | natural | zipf:S")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--trace-iters", type=int, default=0, help="Kineto trace of this many steps (0: none)")
    p.add_argument("--trace-all-ranks", action="store_true")
    p.add_argument("--plain-trace", action="store_true",
                   help="trace as a user's profiler would: no moesim ranges, module events of the Python tracer "
                   "(with_stack=True); transformers' styles only")
    p.add_argument("--scale", type=int, default=1, help="divide every width by this (tiny CPU tests)")
    p.add_argument("--no-traces", action="store_true", help="with --matrix: trace no configuration")
    p.add_argument("--warmup-override", type=int, help="with --matrix: warm-up steps for every config")
    p.add_argument("--iters-override", type=int, help="with --matrix: timed steps for every config")
    p.add_argument("--interleave", action="store_true",
                   help="time each regular/farskip pair on one stack, steps alternating (ABBA...), and record "
                   "the speedup with its bootstrap 95%% interval; the other configurations run alone")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--specs", help="directory of model files (default: the repository's models/specs); the "
                   "records then name their file (config.model_spec, relative to --out)")
    p.add_argument("--out", required=True, help="directory for the records and traces")
    p.add_argument("--deadline", type=float, default=0,
                   help="start no configuration after this many seconds (0: no limit); the rest are "
                   "recorded as skipped")
    args = p.parse_args(argv)
    if not args.matrix and not args.model:
        p.error("give --matrix NAME or --model NAME")
    return args


def units_from(args, ep):
    """What the run measures: one configuration at a time, or with --interleave a pair at once."""
    configs = configs_from(args, ep)
    return interleave(configs) if args.interleave else [(c,) for c in configs]


def configs_from(args, ep):
    if args.matrix:
        configs = matrix(args.matrix, ep)
        overrides = {k: v for k, v in (("warmup", args.warmup_override), ("iters", args.iters_override)) if v}
        if args.no_traces:
            overrides.update(trace_iters=0, trace_all_ranks=False)
        return [RunConfig(**dict(c.as_dict(), **overrides)) for c in configs]
    return [RunConfig(model=args.model, style=args.style, schedule=schedule, phase=args.phase,
                      tokens=args.tokens, seq=args.seq, layers=args.layers, routing=args.routing, dtype=args.dtype,
                      seed=args.seed, warmup=args.warmup, iters=args.iters, trace_iters=args.trace_iters,
                      trace_all_ranks=args.trace_all_ranks, scale=args.scale,
                      plain_trace=args.plain_trace).validate()
            for schedule in dict.fromkeys(args.schedule or ["regular"])]


def write_exclusive(path, record):
    """Writes path, or path.1, path.2, ... if it exists (never overwrites a record)."""
    candidate, n = path, 0
    while True:
        try:
            with open(candidate, "x", encoding="utf-8") as f:
                json.dump(record, f, indent=1)
                f.write("\n")
            return candidate
        except FileExistsError:
            n += 1
            candidate = f"{path}.{n}"


def builder_for(style):
    if style in HF_STYLES:
        from .hf_stacks import hf_builder  # noqa: PLC0415 (transformers is optional)
        return hf_builder
    return native_builder


def past_deadline(ctx, start, deadline):
    """Rank 0's clock decides, so every rank stops at the same configuration."""
    late = [deadline > 0 and time.monotonic() - start > deadline]
    if ctx.world > 1:
        dist.broadcast_object_list(late, src=0)
    return late[0]


def skipped_record(cfg, ep):
    return {"schema_version": 1, "kind": "moesim-torch-stack-run", "name": cfg.name(ep),
            "config": dict(cfg.as_dict(), ep=ep), "status": "skipped", "error": "deadline reached before it started"}


def speedup_text(record):
    speedup = record.get("timing", {}).get("speedup")
    if not speedup or record["config"]["schedule"] != "farskip":
        return ""
    return f"  speedup {speedup['estimate']:.3f} [{speedup['ci95'][0]:.3f}, {speedup['ci95'][1]:.3f}]"


def trace_units(to_trace, ctx, args, start):
    """Traces the timed units that ask for it and adds the traces to their records. After every timing: a process
    that has run the profiler issues its steps slower (data/calibration/2026-11-28-nvidia-h200-profiler-aftermath)."""
    for done, (unit, paths) in enumerate(to_trace):
        if past_deadline(ctx, start, args.deadline):
            if ctx.rank == 0:
                print(f"# deadline reached: {len(to_trace) - done} units left untraced", flush=True)
            return
        traces = trace_configs(list(unit), ctx, args.out, builder_for(unit[0].style), args.specs)
        if ctx.rank != 0:
            continue
        for cfg, path, found in zip(unit, paths, traces):
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            if not cfg.trace_iters or record["status"] != "ok":
                continue
            if isinstance(found, str):
                print(f"{os.path.basename(path)}: not traced: {found}", flush=True)
                continue
            with open(path, "w", encoding="utf-8") as f:  # this run's own record
                json.dump(add_traces(record, cfg, found), f, indent=1)
                f.write("\n")
            print(f"{os.path.basename(path)}: traced ({', '.join(found)})", flush=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    start = time.monotonic()
    ctx = init_context(args.device)
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    rows = []
    to_trace = []  # (unit, its records' paths): traced once every configuration is timed
    try:
        for unit in units_from(args, ctx.world):
            began = time.monotonic()
            if past_deadline(ctx, start, args.deadline):
                records = [skipped_record(cfg, ctx.world) for cfg in unit] if ctx.rank == 0 else None
            else:
                records = run_configs(list(unit), ctx, builder_for(unit[0].style), args.specs)
            if any(c.trace_iters for c in unit):  # every rank alike (a failed unit's record is left as it is)
                to_trace.append((unit, []))
            if ctx.rank != 0:
                continue
            for record in records:
                if args.specs:  # moesim finds a model it does not ship by the record's model_spec
                    spec = model_path(record["config"]["model"], args.specs)
                    record["config"]["model_spec"] = spec_from_record_folder(spec, args.out)
                path = write_exclusive(os.path.join(args.out, record["name"] + ".json"), record)
                if to_trace and to_trace[-1][0] is unit:
                    to_trace[-1][1].append(path)
                failed += record["status"] == "failed"
                p50 = record.get("timing", {}).get("step", {}).get("p50")
                rows.append((record["name"], record["status"], p50, time.monotonic() - began))
                print(f"{record['name']:<80} {record['status']:<8} "
                      f"{'' if p50 is None else f'{p50:10.3f} ms'} ({rows[-1][3]:.1f} s)"
                      + (f"  {record.get('error')}" if record["status"] != "ok" else "")
                      + speedup_text(record), flush=True)
        trace_units(to_trace, ctx, args, start)
    finally:
        close_context(ctx)
    if ctx.rank == 0:
        print(f"# {len(rows)} configs, {failed} failed, {time.monotonic() - start:.1f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
