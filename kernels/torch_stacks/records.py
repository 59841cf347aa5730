"""Reads torch_stacks records without torch: checks them and tabulates step times (FarSkip / regular).

  python3 -m torch_stacks.records check DIR...     exit 1 naming every record or trace that breaks the format
  python3 -m torch_stacks.records table DIR...     markdown table of step p50, FarSkip/regular ratio
  python3 -m torch_stacks.records speedups DIR...  per FarSkip pair: speedup, its bootstrap 95% interval
                                                   within the call, and the difference between calls
  python3 -m torch_stacks.records resummarize DIR... rewrite interleaved pairs' timing.speedup (this method)
  python3 -m torch_stacks.records compare A B      step p50 of B over A per configuration both ran, per style:
                                                   median, 10th and 90th percentile (two runs, hosts or tools)

check: schema_version 1 and kind; status ok/failed/skipped; the config keys; for ok records the step
statistics recomputed from the ranks' gpu_ms (per iteration the slowest rank; p50 the median); an
interleaved pair's speedup and interval recomputed from both records (speedup.py); every trace
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

from .speedup import (METHOD, independent_interval, median_round_ratio, paired_interval, ratio_of_medians,
                      speedup_summary)

CONFIG_KEYS = ("model", "style", "schedule", "phase", "tokens", "seq", "layers", "routing", "dtype", "ep")
STATUSES = ("ok", "failed", "skipped")


def _is_model_file(path):
    """A moesim model file kept beside the records that name it (config.model_spec): not a record."""
    try:
        document = load(path)
    except (OSError, ValueError):
        return False  # the check reports it as the record it fails to be
    return isinstance(document, dict) and "kind" not in document and "moe" in document and "attention" in document


def record_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(glob.glob(os.path.join(path, "**", "*.json"), recursive=True))
            files += [f for f in found if not _is_model_file(f)]
        else:
            files.append(path)
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
    for r in ranks:  # since 2026-11-27: when each step's forward returned, inside the step's issue time
        forward, issue = r.get("forward_issue_ms"), r.get("issue_ms", [])
        if forward is not None and (len(forward) != len(issue) or any(f > i for f, i in zip(forward, issue))):
            problems.append(f"rank {r.get('rank')}: forward_issue_ms is not one time per step within its issue_ms")
    return problems


def pair_steps(path, record):
    """An interleaved record's pair: ({"regular": steps, "farskip": steps}, None) or (None, problem)."""
    partner_path = os.path.join(os.path.dirname(path), f"{record.get('pair')}.json")
    if not os.path.exists(partner_path):
        return None, f"pair: {partner_path} not found beside the record"
    partner = load(partner_path)
    steps = {r["config"]["schedule"]: r.get("timing", {}).get("step", {}).get("per_iteration")
             for r in (record, partner)}
    if set(steps) != {"regular", "farskip"} or not all(steps.values()):
        return None, f"pair: {partner_path} is not the other schedule's record with timed steps"
    return steps, None


def speedup_problems(path, record):
    """An interleaved pair's timing.speedup, recomputed from both records' steps (the partner beside it)."""
    speedup = record["timing"].get("speedup")
    if speedup is None:
        return []
    steps, problem = pair_steps(path, record)
    if problem:
        return [problem]
    if speedup.get("method") != METHOD:
        return [f"timing.speedup.method = {speedup.get('method')!r}: expected {METHOD!r}"]
    expected = speedup_summary(steps["regular"], steps["farskip"])
    problems = []
    if not _close(speedup.get("estimate", float("nan")), expected["estimate"]):
        problems.append(f"timing.speedup.estimate = {speedup.get('estimate')}, recomputed {expected['estimate']}")
    ci = speedup.get("ci95") or [float("nan")] * 2
    if not all(_close(a, b) for a, b in zip(ci, expected["ci95"])):
        problems.append(f"timing.speedup.ci95 = {ci}, recomputed {expected['ci95']}")
    return problems


def trace_problems(path, plain=False):
    """A plain trace (run --plain-trace) shows its ops by the Python tracer's module calls, not moesim's ranges."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: not gzip'd JSON ({e})"]
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return [f"{path}: no traceEvents list (not a Kineto trace)"]
    if plain:
        if not any(str(e.get("name", "")).startswith("nn.Module: ") for e in events):
            return [f"{path}: a plain trace without module calls (nn.Module: ...)"]
    elif not any(str(e.get("name", "")).startswith("moesim.L0.") for e in events):
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
        problems += step_problems(record) or speedup_problems(path, record)
        for trace in record.get("traces", []):
            trace_path = os.path.join(os.path.dirname(path), trace)
            if os.path.exists(trace_path):
                problems += trace_problems(trace_path, plain=config.get("plain_trace", False))
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


def configuration(config):
    """What identifies a configuration across schedules: (model, style, ep, tokens, seq, layers, phase, routing)."""
    return tuple(config[k] for k in ("model", "style", "ep", "tokens", "seq", "layers", "phase", "routing"))


def issue_over_gpu(record):
    """Rank 0's host time to issue a step over its GPU time, both medians (near 1: the host sets the pace)."""
    rank0 = record["ranks"][0]
    return statistics.median(rank0["issue_ms"]) / statistics.median(rank0["gpu_ms"])


def forward_share(record):
    """Rank 0's host time to issue a step's forward over the step's (medians; None for records before 2026-11-27)."""
    rank0 = record["ranks"][0]
    if "forward_issue_ms" not in rank0:
        return None
    return statistics.median(rank0["forward_issue_ms"]) / statistics.median(rank0["issue_ms"])


def table(paths):
    """One row per (model, style, ep, tokens, layers, phase): regular and farskip step p50, their ratio,
    rank 0's host issue time over its GPU time under regular (near 1: the host sets the pace) and the
    forward's share of that issue time (where the record says it)."""
    rows = {}
    for path in record_files(paths):
        r = load(path)
        c = r.get("config", {})
        if r.get("status") != "ok" or c.get("scale", 1) != 1:
            continue
        rows.setdefault(configuration(c), {})[c["schedule"]] = (r["timing"]["step"]["p50"], issue_over_gpu(r),
                                                                 forward_share(r))
    print("| model | style | EP | tokens/rank | seq | layers | phase | routing | regular p50 (ms) | farskip p50 (ms) "
          "| farskip / regular | issue / GPU (regular) | forward / step issue (regular) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(rows):
        reg, far = rows[key].get("regular"), rows[key].get("farskip")
        cells = [f"{v[0]:.2f}" if v else "" for v in (reg, far)]
        ratio = f"{far[0] / reg[0]:.3f}" if reg and far else ""
        issue = f"{reg[1]:.2f}" if reg else ""
        forward = f"{reg[2]:.2f}" if reg and reg[2] is not None else ""
        print("| " + " | ".join(map(str, key)) + f" | {cells[0]} | {cells[1]} | {ratio} | {issue} | {forward} |")
    return 0


def _pairs(paths):
    """(call folder, config key and GPU name) -> {schedule: record}; the call folder is the record's folder."""
    pairs = {}
    for path in record_files(paths):
        r = load(path)
        c = r.get("config", {})
        if r.get("status") != "ok" or c.get("scale", 1) != 1 or c.get("ep", 1) < 2:
            continue
        key = configuration(c) + (r["ranks"][0].get("gpu_before", {}).get("name", "?"),)
        pairs.setdefault((os.path.dirname(path), key), {})[c["schedule"]] = r
    return {k: v for k, v in pairs.items() if "regular" in v and "farskip" in v}


def _pair_row(schedules):
    """Interleaved pairs: median over rounds and its bootstrap over rounds; separate ones: ratio of medians."""
    reg, far = (schedules[s]["timing"]["step"]["per_iteration"] for s in ("regular", "farskip"))
    if schedules["regular"]["config"].get("interleaved"):
        speedup, (low, high) = median_round_ratio(reg, far), paired_interval(reg, far)
    else:
        speedup, (low, high) = ratio_of_medians(reg, far), independent_interval(reg, far)
    return {"speedup": speedup, "low": low, "high": high, "steps": len(reg),
            "issue": issue_over_gpu(schedules["regular"])}


def _mean(values):
    return sum(values) / len(values) if values else float("nan")


def speedups(paths):
    """Per FarSkip pair (a folder's regular and farskip records of one configuration): the speedup and its
    bootstrap 95% interval from the timed steps; then, per configuration measured in several folders, the
    largest difference between folders (same GPU name) next to the intervals' half-widths, and how many such
    configurations have disjoint intervals; means by style, phase, EP and host-bound (regular issue / GPU
    >= 0.9 in any folder)."""
    rows = {k: _pair_row(v) for k, v in _pairs(paths).items()}
    print("| folder | model | style | EP | tokens | layers | phase | steps | speedup | 95% interval | half-width "
          "| issue / GPU |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (folder, key), row in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"| {folder} | {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[5]} | {key[6]} | {row['steps']} | "
              f"{row['speedup']:.3f} | {row['low']:.3f}-{row['high']:.3f} | {(row['high'] - row['low']) / 2:.3f} | "
              f"{row['issue']:.2f} |")
    by_key = {}
    for (folder, key), row in rows.items():
        by_key.setdefault(key, []).append(row)
    groups = {}
    for key, found in by_key.items():
        half = [(r["high"] - r["low"]) / 2 for r in found]
        between = max(r["speedup"] for r in found) - min(r["speedup"] for r in found) if len(found) > 1 else None
        disjoint = len(found) > 1 and max(r["low"] for r in found) > min(r["high"] for r in found)
        host_bound = "host-bound" if max(r["issue"] for r in found) >= 0.9 else "GPU-bound"
        for group in ("all", f"GPU {key[8]}", f"style {key[1]}", f"phase {key[6]}", f"EP {key[2]}", host_bound):
            g = groups.setdefault(group, {"half": [], "between": [], "disjoint": 0})
            g["half"] += half
            g["disjoint"] += disjoint
            if between is not None:
                g["between"].append(between)
    print()
    print("| pairs | count | within a call: 95% half-width, mean | configurations in >= 2 folders | between "
          "folders: |difference| mean | intervals disjoint |")
    print("| --- | --- | --- | --- | --- | --- |")
    for group in sorted(groups):
        g = groups[group]
        print(f"| {group} | {len(g['half'])} | {_mean(g['half']):.3f} | {len(g['between'])} | "
              f"{_mean(g['between']):.3f} | {g['disjoint']} |")
    return 0


def resummarize(paths):
    """Rewrites timing.speedup of every interleaved pair from its per-step times with this version's method
    (records written before the method changed; the steps themselves are left as measured)."""
    for path in record_files(paths):
        record = load(path)
        if record.get("status") != "ok" or "speedup" not in record.get("timing", {}):
            continue
        steps, problem = pair_steps(path, record)
        if problem:
            print(f"{path}: {problem}")
            return 1
        record["timing"]["speedup"] = speedup_summary(steps["regular"], steps["farskip"])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
    return 0


def _p50_by_configuration(path):
    out = {}
    for f in record_files([path]):
        r = load(f)
        c = r.get("config", {})
        if r.get("status") == "ok" and c.get("scale", 1) == 1:
            out[configuration(c) + (c["schedule"],)] = r["timing"]["step"]["p50"]
    return out


def _quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def compare(paths):
    """Per style (and all), over the configurations both folders ran: B's step p50 over A's."""
    if len(paths) != 2:
        print("compare: expected two folders, A and B", file=sys.stderr)
        return 2
    for path in paths:
        if not os.path.isdir(path):
            print(f"compare: {path}: not a folder of records", file=sys.stderr)
            return 2
    a, b = (_p50_by_configuration(p) for p in paths)
    ratios = {}
    for key in sorted(set(a) & set(b)):
        for group in (key[1], "all"):
            ratios.setdefault(group, []).append(b[key] / a[key])
    if not ratios:
        print("compare: no configuration in both", file=sys.stderr)
        return 1
    print("| style | configurations | B / A median | 10th percentile | 90th percentile |")
    print("| --- | --- | --- | --- | --- |")
    for group in sorted(ratios, key=lambda g: (g == "all", g)):
        values = sorted(ratios[group])
        print(f"| {group} | {len(values)} | {statistics.median(values):.3f} | {_quantile(values, 0.1):.3f} | "
              f"{_quantile(values, 0.9):.3f} |")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="torch_stacks.records", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("check", "table", "speedups", "resummarize", "compare"))
    p.add_argument("paths", nargs="+", help="record files or directories (searched recursively)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    actions = {"check": check, "table": table, "speedups": speedups, "resummarize": resummarize, "compare": compare}
    return actions[args.action](args.paths)


if __name__ == "__main__":
    sys.exit(main())
