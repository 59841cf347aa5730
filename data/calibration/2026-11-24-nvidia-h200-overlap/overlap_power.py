#!/usr/bin/env python3
"""What the power_overlap runs say about the engine's power model (sim/Power.hpp).

  python3 overlap_power.py PROFILE.json power_overlap_b1.json power_overlap_b10.json power_overlap_b30.json

1. Idle gaps. For a GEMM at duty d < 1 against the same GEMM at full duty, the wall time per unit of work
   grows by extra = busy_full / (busy_d * d) - 1; with no clock recovery it would grow by 1/d - 1. The share
   of the idle time the clock repays is 1 - extra / (1/d - 1). The mean-power model repays 1/speed_exponent
   of a small gap (for compute-bound work at the cap: T = T_full + gap * (1 - 1/gamma)).
2. A GEMM beside an SM-driven copy. The model's mean board power of a load is idle_w + (GEMM duty) *
   compute_w_at_peak * (GEMM rate / dense peak) + hbm_pj_per_byte * 2 * (copy rate) (the copy reads and writes
   HBM); it has no term for the copy's SMs or for the GEMM slowing beside them.
"""
import json
import sys


def loads(path):
    return {r["load"]: r for r in json.load(open(path))["results"]}


def main():
    profile = json.load(open(sys.argv[1]))
    power = profile["power"]
    peak_tflops = profile["gpu"]["peak_tflops"]["bf16"]
    gamma = power["speed_exponent"]
    print(f"model: speed_exponent {gamma}: a small idle gap is repaid {1 / gamma:.0%}")
    print("| burst (ms) | duty | busy TF/s | full-duty TF/s | wall per work vs full duty | unrepaid | repaid share |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    notes = []
    for path in sys.argv[2:]:
        burst = path.rsplit("_b", 1)[1].split(".")[0]
        runs = loads(path)
        full = runs["gemm:8192:8192:8192"]
        for name, r in runs.items():
            if r["kind"] != "gemm" or r is full:
                continue
            extra = full["busy_tflops"] / (r["busy_tflops"] * r["duty"]) - 1
            unrepaid = 1 / r["duty"] - 1
            print(f"| {burst} | {r['duty']:.3f} | {r['busy_tflops']:.1f} | {full['busy_tflops']:.1f} | "
                  f"+{extra:.1%} | +{unrepaid:.1%} | {1 - extra / unrepaid:.0%} |")
        for name, r in runs.items():
            if r["kind"] not in ("smcopy", "gemm+smcopy"):
                continue
            copy_gbps = r["busy_GBps"] if r["kind"] == "smcopy" else r["copy_rate_GBps"]
            gemm_w = 0.0
            if r["kind"] == "gemm+smcopy":
                gemm_w = r["duty"] * power["compute_w_at_peak"] * r["busy_tflops"] / peak_tflops
            model = power["idle_w"] + gemm_w + power["hbm_pj_per_byte"] * 1e-12 * 2 * copy_gbps * 1e9
            notes.append(f"{name}: duty {r['duty']:.3f}, copy {copy_gbps:.1f} GB/s, clock {r['sm_clock_mhz']:.0f} MHz: "
                         f"board {r['power_w']:.1f} W measured, {model:.1f} W by the model "
                         f"({r['power_w'] / model - 1:+.1%})")
    print("\n".join(notes))


if __name__ == "__main__":
    main()
