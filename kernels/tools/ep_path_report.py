#!/usr/bin/env python3
"""Where an expert-parallel step's host time goes, from torch_stacks.host_ranges timelines of every rank.

    python3 kernels/tools/ep_path_report.py DIR [--json OUT]

DIR holds host-ranges.json (rank 0) and host-ranges.rank<R>.json (or the same gzipped). Over the untraced steps after the warm-up:
  - per interval between consecutive events (a range's entry or exit, a mark) inside the ops of the expert-parallel
    path, the host microseconds summed over layers: median over steps, mean over ranks;
  - the split-size exchange, a sync: each rank reaches it (mark counts_exchange) and has the counts on the host
    (counts_on_host). Per layer, its wait splits into the wait for the last rank to arrive (last arrival - own
    arrival) and what follows the last arrival (own release - last arrival: the collective, the copy and any GPU
    work queued before them).
"""
import argparse
import glob
import gzip
import json
import os
import re
import statistics

EP_OPS = ("permute", "dispatch", "dispatch_wait", "routed_experts", "combine", "combine_wait", "unpermute")


def load(folder):
    ranks = []
    for path in sorted(glob.glob(os.path.join(folder, "host-ranges*.json*"))):
        with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
            ranks.append(json.load(f))
    if not ranks:
        raise SystemExit(f"{folder}: no host-ranges*.json[.gz]")
    ranks.sort(key=lambda r: r.get("rank", 0))
    argv = ranks[0]["argv"]
    warmup = int(argv[argv.index("--warmup") + 1]) if "--warmup" in argv else 0
    steps = [[s for i, s in enumerate(r["steps"]) if i >= warmup and not s["profiled"]] for r in ranks]
    return ranks, steps


RANGE = re.compile(r"L\d+\.(\w+)([<>])$")


def label(event):
    """A range event without its layer ("permute>"), a mark as it is."""
    m = RANGE.match(event)
    return m.group(1) + m.group(2) if m else event


def intervals(timeline):
    """(op, 'from -> to') -> microseconds, summed over layers, for the intervals inside the EP ops' ranges."""
    out, inside = {}, None
    for (event, ns), (next_event, next_ns) in zip(timeline, timeline[1:]):
        if event.endswith(">") and (m := RANGE.match(event)):
            inside = m.group(1)
        if inside in EP_OPS:
            key = (inside, f"{label(event)} -> {label(next_event)}")
            out[key] = out.get(key, 0.0) + (next_ns - ns) / 1e3
        if next_event.endswith("<"):
            inside = None
    return out


def exchange_waits(step_per_rank):
    """Per rank: (wait for the last arrival, time from the last arrival to the counts on the host), summed over
    the layers' split-size exchanges, microseconds."""
    def times(step, event):
        return [ns for e, ns in step["timeline"] if e == event]
    arrivals = [times(s, "counts_exchange") for s in step_per_rank]
    released = [times(s, "counts_on_host") for s in step_per_rank]
    last = [max(a[i] for a in arrivals) for i in range(len(arrivals[0]))]
    return [(sum(l - a for l, a in zip(last, arr)) / 1e3, sum(r - l for r, l in zip(rel, last)) / 1e3)
            for arr, rel in zip(arrivals, released)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--json")
    args = parser.parse_args()
    ranks, steps = load(args.folder)
    per_rank = []
    for rank_steps in steps:
        samples = {}
        for s in rank_steps:
            for key, us in intervals(s["timeline"]).items():
                samples.setdefault(key, []).append(us)
        per_rank.append({k: statistics.median(v) for k, v in samples.items()})
    keys = list(dict.fromkeys(k for r in per_rank for k in r))  # in the order the step runs them
    rows = [{"op": op, "interval": interval,
             "us": statistics.mean(r.get((op, interval), 0.0) for r in per_rank)} for op, interval in keys]
    issue = statistics.mean(statistics.median(s["issue_us"] for s in rank_steps) for rank_steps in steps)
    result = {"folder": args.folder, "ranks": len(ranks), "steps": len(steps[0]), "issue_us": issue,
              "intervals": rows}
    print(f"{args.folder}: {len(ranks)} ranks, {len(steps[0])} untraced steps, issue {issue:.0f} us (median, "
          "mean over ranks); host us summed over layers:")
    for row in rows:
        print(f"  {row['op']:15s} {row['interval']:45s} {row['us']:9.1f}")
    if len(ranks) > 1 and any(e == "counts_exchange" for e, _ in steps[0][0]["timeline"]):
        waits = [exchange_waits([rank_steps[i] for rank_steps in steps]) for i in range(len(steps[0]))]
        result["exchange"] = [{"rank": r, "wait_for_last_us": statistics.median(w[r][0] for w in waits),
                               "after_last_us": statistics.median(w[r][1] for w in waits)}
                              for r in range(len(ranks))]
        for e in result["exchange"]:
            print(f"  split-size exchange, rank {e['rank']}: waits {e['wait_for_last_us']:.0f} us for the last "
                  f"rank to arrive, then {e['after_last_us']:.0f} us until the counts are on the host")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
