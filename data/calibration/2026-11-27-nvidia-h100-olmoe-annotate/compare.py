"""Predicted against measured for the OLMoE runs beside this file: the shipped profile of each experts
implementation, the profile learned from its traced step, and that profile at each configuration's host probe.

    python3 compare.py MOESIM LEARNED_DIR     # LEARNED_DIR holds olmoe-grouped_mm.json and olmoe-eager.json

Prints a markdown table per implementation and the median and mean |error| over the untraced configurations.
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED = {"grouped_mm": "hf-grouped_mm", "eager": "hf-eager"}


def simulate(moesim, impl, timing, probe=None):
    cmd = [moesim, "simulate", "--model", os.path.join(HERE, "olmoe-1b-7b.json"), "--hw", "h100", "--schedule",
           "regular", "--phase", timing["phase"], "--tokens", str(timing["tokens"]), "--seq", "2048", "--layers",
           str(timing["layers"]), "--ep", "1", "--routing", "uniform", "--impl", impl, "--json", "-"]
    if probe:
        cmd += ["--host-probe", f"{probe:.2f}"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["step_ms"]


def main():
    moesim, learned_dir = sys.argv[1], sys.argv[2]
    errors = {}
    for style, shipped in SHIPPED.items():
        run = json.load(open(os.path.join(HERE, style, "run.json")))
        learned = os.path.join(learned_dir, f"olmoe-{style}.json")
        print(f"## {style}: learned from T 2048 L 2 train (traced host probe {run['traced']['host_probe_us']:.2f} us)")
        print("| config | probe | measured p50 (min-max) ms | shipped | learned | learned, --host-probe |")
        print("| --- | --- | --- | --- | --- | --- |")
        for k, t in enumerate(run["timings"]):
            measured = t["step_ms"]["p50"]
            predicted = {"shipped": simulate(moesim, shipped, t), "learned": simulate(moesim, learned, t),
                         "learned, --host-probe": simulate(moesim, learned, t, t["host_probe_us"])}
            cells = []
            for how, value in predicted.items():
                error = 100 * (value / measured - 1)
                cells.append(f"{value:.2f} ({error:+.1f}%)")
                if k:  # the traced configuration is not a prediction
                    errors.setdefault((how, style), []).append(abs(error))
            print(f"| T {t['tokens']} L {t['layers']} {t['phase']}{' (traced)' if k == 0 else ''} | "
                  f"{t['host_probe_us']:.1f} | {measured:.2f} ({t['step_ms']['min']:.2f}-{t['step_ms']['max']:.2f}) | "
                  + " | ".join(cells) + " |")
    for (how, style), e in errors.items():
        print(f"{how} {style}: median |error| {statistics.median(e):.1f}% mean {statistics.mean(e):.1f}% over "
              f"{len(e)} untraced configurations")


if __name__ == "__main__":
    main()
