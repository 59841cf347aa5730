#!/usr/bin/env python3
"""Writes the shipped hardware profiles hwprofiles/profiles/<name>.json.

Every number comes from /work/shared/hw-figures.md (tags [S1]..[S45]) or from the few extra
sources listed in EXTRA_SOURCES ([X1]..[X6]); estimates are marked (E) in the "source" strings.
The derivations (GEMM shape model, collective ramps, mesh scaling, inter-node tables) live here
once, so the eight profiles stay consistent. Re-run after changing a figure:

    python3 hwprofiles/tools/make_published_profiles.py

A calibration run writes <name>.calibrated.json next to these files instead of editing them.
"""
import json
import math
import pathlib
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__

from profile_math import (ATTENTION_SEQ, FA2_H100_TFLOPS, FA3_H100_TFLOPS, GEMM_M, GEMM_MIN_NK, MEMORY_BYTES,
                          MEMORY_RAMP, SIZE_FRACTION, TILE, pnorm3, ramped_points, sig, steps)
from published_figures import DEVICES, EXTRA_SOURCES, HW_FIGURES_SOURCES

COMPILED_ON = "2026-11-21"


def gemm_table(d):
    e_max = d["gemm_best"] / (d["peak"]["bf16"] * d["clock_factor"])
    hbm_effective = d["memory_large_fraction"] * d["hbm_bw_GBps"] * 1e9
    sustained = d["peak"]["bf16"] * 1e12 * d["clock_factor"]
    rows = []
    for m in GEMM_M:
        row = []
        for nk in GEMM_MIN_NK:
            tiles = math.ceil(m / TILE) * math.ceil(nk / TILE)
            fill = 0.4 + 0.6 * min(1.0, tiles / d["sm_count"])
            roofline = m * hbm_effective / sustained  # bf16 weights: m FLOP per byte streamed
            row.append(sig(min(1.0, pnorm3(e_max * SIZE_FRACTION[nk] * fill, roofline)), 3))
        rows.append(row)
    source = (
        f"(E) shape model anchored at the best measured bf16 GEMM {d['gemm_best']} TF/s {d['gemm_best_src']} "
        f"= {sig(e_max, 3)} of the sustained peak ({d['peak']['bf16']} TF/s x clock factor {d['clock_factor']}). "
        "value = pnorm3(e_max * size(min_nk) * fill, roofline(m)); size = {512: .55, 1024: .75, 2048: .9, "
        "4096: .97, 8192: 1}; fill = 0.4 + 0.6 * min(1, ceil(m/128) * ceil(min_nk/128) / SMs); roofline = "
        "m * memory-efficiency * HBM / sustained peak (bf16 weight streaming); pnorm3(a,b) = (a^-3 + b^-3)^(-1/3). "
        "Replace with a calibration run (kernels/ gemm sweep)."
    )
    return {"m": GEMM_M, "min_nk": GEMM_MIN_NK, "value": rows, "source": source}


def attention_curve(d):
    kind, scale, note = d["attention"]
    shape = FA3_H100_TFLOPS if kind == "fa3" else FA2_H100_TFLOPS
    values = [sig(scale * t / max(shape), 3) for t in shape]
    return {"seq": ATTENTION_SEQ, "value": values, "source": note}


def memory_curve(d):
    large = d["memory_large_fraction"]
    return {
        "bytes": MEMORY_BYTES,
        "value": [sig(large * r, 3) for r in MEMORY_RAMP],
        "source": f"large copies: {large} of the datasheet HBM bandwidth {d['memory_src']}; smaller sizes ramp "
        f"{MEMORY_RAMP} x that (E, launch floor is kernel_min_us)",
    }


def efficiency(d):
    return {
        "gemm": gemm_table(d),
        "gemm_dtype_factor": d["dtype_factor"],
        "grouped_gemm_factor": 0.85,
        "attention_fwd": attention_curve(d),
        "attention_bwd_factor": 0.8,
        "memory": memory_curve(d),
        "source": "gemm_dtype_factor: " + d["dtype_factor_src"] + ". grouped_gemm_factor 0.85 (E): grouped/ragged "
        "expert GEMMs pay per-group tile padding and scheduling. attention_bwd_factor 0.8 (E): an "
        "estimate that backward attention kernels reach ~80% of the forward FLOP rate; not in hw-figures.md and "
        "not measured here.",
    }


# ---------------------------------------------------------------------------------------------
# Collectives


def intra_tables(d):
    tables = []
    for n in (2, 4, 8):
        alpha = d["intra_alpha_us"][n]
        for kind in ("all_to_all", "all_reduce", "all_gather", "reduce_scatter"):
            spec = d["intra"](kind, n)
            # Ring kinds share one per-step latency: the all-reduce alpha over its 2(n-1) steps.
            step_us = alpha if kind == "all_to_all" else sig(alpha / steps("all_reduce", n), 3)
            tables.append({
                "kind": kind, "scope": "intra", "gpus": n, "algorithm": spec["algorithm"],
                "step_latency_us": step_us, "busbw": spec.get("points") or ramped_points(spec["GBps"]),
                "source": spec["source"] + f" Latency: {d['intra_alpha_src']}",
            })
    return tables


def inter_tables(d):
    g, net = d["gpus_per_node"], d["network"]
    per_gpu_net = net["nics_per_node"] * net["nic_usable_GBps"] / g
    tables = []
    nodes = 2
    while nodes <= net["table_nodes"]:  # the largest cluster the tables cover; no limit on --nodes
        n = nodes * g
        a2a = 0.8 * per_gpu_net * (n - 1) / (n - g)
        a2a_alpha = 30 * (1 + 0.25 * math.log2(nodes / 2))
        tables.append({
            "kind": "all_to_all", "scope": "inter", "gpus": n, "algorithm": "direct",
            "step_latency_us": sig(a2a_alpha, 3), "busbw": ramped_points(a2a),
            "source": f"(E) derived from the NIC rate: each GPU sends (n-g)/n of its data over its share of the "
            f"node's NICs ({net['nics_per_node']} x {net['nic_usable_GBps']} GB/s / {g} GPUs = {sig(per_gpu_net)} GB/s "
            f"[{net['usable_src']}]; all-to-all cannot aggregate NICs [S27]) at 80% efficiency (E); busbw = 0.8 x "
            f"{sig(per_gpu_net)} x (n-1)/(n-g) with n={n}, g={g}. Latency 30 us x (1 + log2(nodes/2)/4) (E, inter-node "
            "alpha 25-50 us [S37][hw-figures 10]).",
        })
        ring_cap = min(net["nics_per_node"] * net["nic_usable_GBps"], d["intra_ring_GBps"])
        ar_alpha = 46 * (1 + 0.5 * math.log2(nodes / 2))
        tables.append({
            "kind": "all_reduce", "scope": "inter", "gpus": n, "algorithm": "ring",
            "step_latency_us": sig(ar_alpha / (2 * (n - 1)), 3), "busbw": ramped_points(0.9 * ring_cap),
            "source": f"(E) ring all-reduce across nodes runs one ring per NIC, so busbw ~ min(node NIC total "
            f"{net['nics_per_node']} x {net['nic_usable_GBps']}, intra-node ring {d['intra_ring_GBps']}) x 0.9 (E). "
            f"Latency: 46 us tiny all-reduce on 2 nodes [S37], x (1 + log2(nodes/2)/2) beyond (E), spread over "
            f"2(n-1) steps.",
        })
        nodes *= 2
    return tables


# ---------------------------------------------------------------------------------------------


def profile(d):
    net = d["network"]
    return {
        "schema_version": 1,
        "name": d["name"],
        "description": d["description"],
        "provenance": {
            "kind": "published",
            "sources": [f"[{t}] {HW_FIGURES_SOURCES.get(t) or EXTRA_SOURCES[t]}" for t in d["sources"]],
            "date": COMPILED_ON,
            "device": "not measured by moesim; compiled from the sources",
            "libraries": d["libraries"],
        },
        "gpu": {
            "name": d["gpu_name"], "sm_count": d["sm_count"], "peak_clock_mhz": d["peak_clock_mhz"],
            "max_boost_clock_mhz": d["max_boost_clock_mhz"], "sustained_clock_factor": d["clock_factor"],
            "peak_tflops": d["peak"], "hbm_GB": d["hbm_GB"], "hbm_bw_GBps": d["hbm_bw_GBps"], "l2_MiB": d["l2_MiB"],
            "llc_MiB": d["llc_MiB"], "launch_overhead_us": d["launch_us"][0], "graph_launch_overhead_us": d["launch_us"][1],
            "graph_node_overhead_us": d["launch_us"][2], "kernel_min_us": d["launch_us"][3], "source": d["gpu_src"],
        },
        "efficiency": efficiency(d),
        "node": {"gpus_per_node": d["gpus_per_node"], "fabric": d["fabric"]},
        "network": {k: net[k] for k in ("nics_per_node", "nic_gbps", "nic_usable_GBps", "latency_us")}
        | {"source": net["source"]},
        "collectives": intra_tables(d) + inter_tables(d),
        "contention": d["contention"],
    }


def dump(value, indent=0):
    """JSON with scalar arrays and small objects on one line, so tables read as tables."""
    pad = "  " * indent
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()) and len(value) <= 2:
            return json.dumps(value)
        items = [f'{pad}  {json.dumps(k)}: {dump(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value) and value and not isinstance(value[0], str):
            return json.dumps(value)
        if all(isinstance(v, dict) and len(v) <= 2 for v in value):
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        return "[\n" + ",\n".join(pad + "  " + dump(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def main():
    out_dir = pathlib.Path(__file__).resolve().parent.parent / "profiles"
    for d in DEVICES:
        path = out_dir / f"{d['name']}.json"
        path.write_text(dump(profile(d)) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
