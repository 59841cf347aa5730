#!/usr/bin/env python3
"""Host cost of an eager PyTorch op inside a step, where every op differs from the last, against the same op in a
warm loop, as microbenchmarks time it.

A step of an eager MoE stack issues hundreds of different ops (norms, projections, routing, permutes, collectives
and their Python wrappers) before it repeats one; a microbenchmark repeats a few. The interpreter's and the
dispatcher's code and branch history for one op are then no longer in the core's caches when it runs again, so
each op costs more host time than a warm loop says. This tool measures that factor on the machine it runs on:
chains of L ops, each taking the previous op's [rows, width] output, built from a pool of shape-preserving ops,
  - cycle K: the pool split into groups of K ops, each group's chain cycling through its K ops; per op, the mean
    over groups (K = 1: the same op L times; K = 8: as torch_dispatch_bench's layer cases, 4 to 8 ops in a loop;
    K = 16, 32: between; K = all: every op of the pool once, as a step issues them);
timed as forward issue (autograd recording on, as in training), forward under no_grad (inference), and the
backward autograd runs for the chain (`.backward()` of the chain's output, engine start included, the same in
every K). Rounds alternate the K values, so a drift of the host's speed hits all of them alike.

    python3 kernels/tools/torch_step_context.py --device cuda --out step-context.json

The record gives, per K and mode, the median and minimum over rounds of the microseconds per op, and the ratios
K = all over K = 8 that cost/implementations/make_builtins.py applies to warm-loop host costs. On CUDA the tensors
are small, so the host sets the pace; the device is synchronised outside the timed part of each sample.
"""
import argparse
import json
import platform
import statistics
import time

import torch
import torch.nn.functional as F

from torch_dispatch_bench import cpu_model

CYCLES = (1, 8, 16, 32, 0)  # 0: the whole pool


def op_pool(device, rows, width, dtype):
    """Shape-preserving single-call ops on [rows, width]: (name, fn(x) -> [rows, width])."""
    other = torch.randn(rows, width, device=device, dtype=dtype)
    positive = other.abs() + 1
    column = torch.randn(rows, 1, device=device, dtype=dtype)
    weight = torch.randn(width, width, device=device, dtype=dtype) / width
    mask = other > 0
    perm = torch.randperm(rows, device=device)
    cols = torch.randint(0, width, (rows, width), device=device)
    return [
        ("mul", lambda x: x * other), ("add", lambda x: x + other), ("sub_column", lambda x: x - column),
        ("div", lambda x: x / positive), ("exp", torch.exp), ("sigmoid", torch.sigmoid), ("silu", F.silu),
        ("gelu", F.gelu), ("tanh", torch.tanh), ("relu", F.relu), ("softmax", lambda x: x.softmax(-1)),
        ("log_softmax", lambda x: x.log_softmax(-1)), ("cumsum", lambda x: x.cumsum(-1)),
        ("matmul", lambda x: x @ weight), ("linear", lambda x: F.linear(x, weight)),
        ("layer_norm", lambda x: F.layer_norm(x, (width,))), ("flip", lambda x: x.flip(0)),
        ("roll", lambda x: x.roll(1, 0)), ("clamp", lambda x: x.clamp(-1, 1)), ("abs", torch.abs),
        ("square", torch.square), ("masked_fill", lambda x: x.masked_fill(mask, 0)),
        ("where", lambda x: torch.where(mask, x, other)), ("index", lambda x: x[perm]),
        ("gather", lambda x: x.gather(1, cols)), ("lerp", lambda x: torch.lerp(x, other, 0.5)),
        ("addcmul", lambda x: torch.addcmul(x, other, other)), ("tril", torch.tril), ("triu", torch.triu),
        ("erf", torch.erf), ("expm1", torch.expm1), ("sin", torch.sin), ("cos", torch.cos), ("atan", torch.atan),
        ("sort", lambda x: x.sort(-1).values), ("index_add", lambda x: x.index_add(0, perm, other)),
        ("scatter_add", lambda x: x.scatter_add(1, cols, other)), ("pow", lambda x: x.pow(2)),
        ("mul_scalar", lambda x: x * 0.5), ("add_scalar", lambda x: x + 1.0), ("dropout", lambda x: F.dropout(x, 0.1)),
        ("neg", torch.neg), ("softplus", F.softplus), ("leaky_relu", F.leaky_relu), ("elu", F.elu),
        ("hardtanh", F.hardtanh), ("addmm", lambda x: torch.addmm(other, x, weight)), ("log1p", lambda x: x.log1p()),
        ("rsqrt", torch.rsqrt), ("reciprocal", torch.reciprocal), ("mish", F.mish), ("selu", F.selu),
        ("logsigmoid", F.logsigmoid), ("hardswish", F.hardswish), ("clone", torch.clone), ("sign_mul", torch.sgn),
    ]


def chains(pool, cycle):
    """Each group's chain of len(pool) ops: the group's ops in turn. cycle 0: one chain through the whole pool."""
    fns = [fn for _, fn in pool]
    k = cycle or len(fns)
    groups = [fns[i:i + k] for i in range(0, len(fns), k)]
    return [[group[i % len(group)] for i in range(len(fns))] for group in groups]


def run_chain(chain, x):
    for fn in chain:
        x = fn(x)
    return x


def sample(chain_list, leaf, mode, sync):
    """Microseconds per op over the chains of one cycle length, one pass each."""
    total, ops = 0.0, 0
    for chain in chain_list:
        sync()
        if mode == "backward":
            out = run_chain(chain, leaf)
            grad = torch.ones_like(out)
            sync()
            start = time.perf_counter()
            out.backward(grad)
        elif mode == "no_grad":
            with torch.no_grad():
                start = time.perf_counter()
                run_chain(chain, leaf)
        else:
            start = time.perf_counter()
            run_chain(chain, leaf)
        total += time.perf_counter() - start
        ops += len(chain)
    return total / ops * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    dtype = getattr(torch, args.dtype)
    pool = op_pool(device, args.rows, args.width, dtype)
    leaf = torch.randn(args.rows, args.width, device=device, dtype=dtype, requires_grad=True)
    by_cycle = {cycle: chains(pool, cycle) for cycle in CYCLES}
    modes = ("forward", "no_grad", "backward")
    for chain_list in by_cycle.values():  # warm-up: every op compiled/allocated once
        for mode in modes:
            sample(chain_list, leaf, mode, sync)
    samples = {(cycle, mode): [] for cycle in CYCLES for mode in modes}
    for round_ in range(args.rounds):
        order = CYCLES if round_ % 2 == 0 else tuple(reversed(CYCLES))
        for cycle in order:
            for mode in modes:
                samples[cycle, mode].append(sample(by_cycle[cycle], leaf, mode, sync))
    name = {c: f"cycle_{c}" for c in CYCLES} | {1: "repeated", 0: "distinct"}
    results = {f"{name[c]}_{m}_per_op": {"p50": statistics.median(v), "min": min(v)} for (c, m), v in samples.items()}
    ratios = {m: results[f"distinct_{m}_per_op"]["p50"] / results[f"cycle_8_{m}_per_op"]["p50"] for m in modes}
    for key, value in results.items():
        print(f"{key:28s} {value['p50']:7.2f} us (min {value['min']:.2f})")
    for mode, ratio in ratios.items():
        print(f"step context ({mode}): distinct / cycle of 8 = {ratio:.3f}")
    record = {"schema_version": 1, "tool": "moesim-torch-step-context", "unit": "us_per_op",
              "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpu_model": cpu_model(),
              "device": args.device, "gpu": torch.cuda.get_device_name() if device.type == "cuda" else None,
              "torch": torch.__version__, "python": platform.python_version(), "rounds": args.rounds,
              "rows": args.rows, "width": args.width, "dtype": args.dtype, "pool": [n for n, _ in pool],
              "results": results, "distinct_over_cycle_8": ratios}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
