"""Reads torch_stacks records without torch: checks them and tabulates step times (FarSkip / regular).

  python3 -m torch_stacks.records check DIR...     exit 1 naming every record or trace that breaks the format
  python3 -m torch_stacks.records table DIR...     markdown table of step p50, FarSkip/regular ratio

check: schema_version 1 and kind; status ok/failed/skipped; the config keys; for ok records the step
statistics recomputed from the ranks' gpu_ms (per iteration the slowest rank; p50 the median); every trace
kept beside the record (a data folder keeps a chosen subset) is gzip'd Kineto JSON with moesim.L<layer>.<op>
ranges. table leaves out scaled-down configurations (config.scale > 1: test data, not the models' shapes).
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import sys

CONFIG_KEYS = ("model", "style", "schedule", "phase", "tokens", "seq", "layers", "routing", "dtype", "ep")
STATUSES = ("ok", "failed", "skipped")


def record_files(paths):
    files = []
    for path in paths:
        files += sorted(glob.glob(os.path.join(path, "**", "*.json"), recursive=True)) if os.path.isdir(path) \
            else [path]
    return [f for f in files if not f.endswith(".trace.json")]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def step_problems(record):
    ranks, step = record.get("ranks", []), record.get("timing", {}).get("step", {})
    if not ranks or not all(r.get("gpu_ms") for r in ranks):
        return ["no per-rank gpu_ms"]
    slowest = [max(r["gpu_ms"][i] for r in ranks) for i in range(len(ranks[0]["gpu_ms"]))]
    problems = []
    if len(slowest) != record["config"].get("iters"):
        problems.append(f"{len(slowest)} timed iterations, config.iters = {record['config'].get('iters')}")
    if step.get("per_iteration") != slowest:
        problems.append("timing.step.per_iteration is not the slowest rank's gpu_ms per iteration")
    for key, value in (("p50", statistics.median(slowest)), ("min", min(slowest)), ("max", max(slowest))):
        if not _close(step.get(key, float("nan")), value):
            problems.append(f"timing.step.{key} = {step.get(key)}, recomputed {value}")
    return problems


def trace_problems(path):
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: not gzip'd JSON ({e})"]
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return [f"{path}: no traceEvents list (not a Kineto trace)"]
    if not any(str(e.get("name", "")).startswith("moesim.L0.") for e in events):
        return [f"{path}: no moesim.L0.<op> range"]
    return []


def record_problems(path):
    try:
        record = load(path)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"]
    problems = []
    if record.get("schema_version") != 1 or record.get("kind") != "moesim-torch-stack-run":
        problems.append("schema_version/kind: expected 1 / moesim-torch-stack-run")
    if record.get("status") not in STATUSES:
        problems.append(f"status = {record.get('status')!r}: expected one of {', '.join(STATUSES)}")
    config = record.get("config", {})
    problems += [f"config.{k}: missing" for k in CONFIG_KEYS if k not in config]
    if record.get("status") == "ok" and not problems:
        problems += step_problems(record)
        for trace in record.get("traces", []):
            trace_path = os.path.join(os.path.dirname(path), trace)
            if os.path.exists(trace_path):
                problems += trace_problems(trace_path)
    return problems


def check(paths):
    files = record_files(paths)
    bad = 0
    for path in files:
        for problem in record_problems(path):
            print(f"{path}: {problem}")
            bad += 1
    print(f"# {len(files)} records, {bad} problems")
    return 1 if bad or not files else 0


def table(paths):
    """One row per (model, style, ep, tokens, layers, phase): regular and farskip step p50, their ratio, and
    rank 0's host issue time over its GPU time under regular (near 1: the host sets the pace)."""
    rows = {}
    for path in record_files(paths):
        r = load(path)
        c = r.get("config", {})
        if r.get("status") != "ok" or c.get("scale", 1) != 1:
            continue
        key = (c["model"], c["style"], c["ep"], c["tokens"], c["seq"], c["layers"], c["phase"], c["routing"])
        rank0 = r["ranks"][0]
        rows.setdefault(key, {})[c["schedule"]] = (
            r["timing"]["step"]["p50"], statistics.median(rank0["issue_ms"]) / statistics.median(rank0["gpu_ms"]))
    print("| model | style | EP | tokens/rank | seq | layers | phase | routing | regular p50 (ms) | farskip p50 (ms) "
          "| farskip / regular | issue / GPU (regular) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(rows):
        reg, far = rows[key].get("regular"), rows[key].get("farskip")
        cells = [f"{v[0]:.2f}" if v else "" for v in (reg, far)]
        ratio = f"{far[0] / reg[0]:.3f}" if reg and far else ""
        issue = f"{reg[1]:.2f}" if reg else ""
        print("| " + " | ".join(map(str, key)) + f" | {cells[0]} | {cells[1]} | {ratio} | {issue} |")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="torch_stacks.records", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("check", "table"))
    p.add_argument("paths", nargs="+", help="record files or directories (searched recursively)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    return check(args.paths) if args.action == "check" else table(args.paths)


if __name__ == "__main__":
    sys.exit(main())
