#!/usr/bin/env python3
"""Host cost of freeing an autograd graph, per node, against the host probe.

A forward step that records autograd and is not followed by a backward ends by dropping its output, which frees
the whole graph at once: every node, and every tensor it saved. The reference stacks' forward records show that
time as their issue time after the forward returned (2-4 ms per two layers of a loop over experts, 0.08-0.13
host probes per forward launch: data/torch-stacks/2026-11-29-nvidia-h200-x1-newmodels); a training step frees
the graph as its backward goes. This tool times the free on its own:
  - chain: N distinct shape-preserving elementwise ops on an [8, 16] tensor (the host probe's kind of op);
  - linear: N bias-free linear layers with a SiLU between each, [rows, width] activations, so each node saves
    tensors of the size asked for (the caching allocator takes them back);
  - experts_loop: transformers' eager experts (a loop over the experts hit: rows gathered by index, a slice of the
    fused gate/up weight, SiLU times up, the down projection, the routing weight, index_add_ into token order) on
    balanced top-k routing, the widths asked for: the graph a loop over experts leaves;
  - stack: a forward of kernels/torch_stacks' stack of a model and style (`--stack MODEL:STYLE`, 2 layers,
    2,048 tokens, balanced routing; `:SCALE` divides its widths), the graph a reference stack's forward record
    frees after its forward returns;
each built with autograd recording, then `del` of its output timed on the host (the device synchronised before),
rounds alternating the cases; the host probe (kernels/torch_stacks/host_probe.py) after every round. Nodes are
counted by walking the graph from the output (leaves' AccumulateGrad left out), kernel launches on CUDA by the
profiler over one build. Per case the record has the median and minimum over rounds of the microseconds per
autograd node, the median per node over the round's probe, and per launch.

    python3 kernels/tools/torch_graph_free.py --device cuda --out graph-free.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_dispatch_bench import record_header  # noqa: E402
from torch_stacks.host_probe import make_probe  # noqa: E402 (torch_dispatch_bench puts kernels/ on the path)

OPS = (torch.neg, torch.exp, torch.sigmoid, torch.tanh, torch.sin, torch.cos, torch.relu, torch.erf,
       lambda x: x * 0.5, lambda x: x + 1.0)


def chain_case(device, nodes):
    x = torch.randn(8, 16, device=device, requires_grad=True)

    def build():
        y = x
        for i in range(nodes):
            y = OPS[i % len(OPS)](y)
        return y
    return build, nodes


def linear_case(device, nodes, rows, width, dtype):
    layers = [torch.nn.Linear(width, width, bias=False, device=device, dtype=dtype) for _ in range(nodes // 2)]
    x = torch.randn(rows, width, device=device, dtype=dtype, requires_grad=True)

    def build():
        y = x
        for layer in layers:
            y = torch.nn.functional.silu(layer(y))
        return y
    return build, 2 * len(layers)  # a linear (mm) node and a SiLU node per layer


def experts_loop_case(device, experts, top_k, tokens, hidden, ffn, dtype):
    gate_up = torch.randn(experts, 2 * ffn, hidden, device=device, dtype=dtype, requires_grad=True)
    down = torch.randn(experts, hidden, ffn, device=device, dtype=dtype, requires_grad=True)
    x = torch.randn(tokens, hidden, device=device, dtype=dtype, requires_grad=True)
    weights = torch.rand(tokens, top_k, device=device, dtype=dtype, requires_grad=True)
    chosen = (torch.arange(tokens, device=device)[:, None] * top_k + torch.arange(top_k, device=device)) % experts
    expert_mask = torch.nn.functional.one_hot(chosen, experts).permute(2, 1, 0)

    def build():
        out = torch.zeros_like(x)
        for e in range(experts):
            top_k_pos, token_idx = torch.where(expert_mask[e])
            gate, up = torch.nn.functional.linear(x[token_idx], gate_up[e]).chunk(2, dim=-1)
            h = torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, down[e])
            out.index_add_(0, token_idx, h * weights[token_idx, top_k_pos, None])
        return out
    return build, count_nodes(build)


def stack_case(device, spec, dtype_name):
    """A forward of kernels/torch_stacks' stack: MODEL:STYLE[:SCALE]."""
    from torch_stacks.bench import model_path  # noqa: PLC0415 (the stacks load only when asked)
    from torch_stacks.config import RunConfig  # noqa: PLC0415
    from torch_stacks.distributed import RunContext  # noqa: PLC0415
    from torch_stacks.layers import TORCH_DTYPES  # noqa: PLC0415
    from torch_stacks.model_spec import load_layer_shape, scaled  # noqa: PLC0415
    from torch_stacks.run import builder_for  # noqa: PLC0415
    model, style, *rest = spec.split(":")
    cfg = RunConfig(model=model, style=style, dtype=dtype_name, scale=int(rest[0]) if rest else 1)
    cfg.validate()
    ctx = RunContext(0, 1, device)
    shape = scaled(load_layer_shape(model_path(cfg.model)), cfg.scale)
    _stack, forward, _ = builder_for(style)(cfg, shape, ctx)  # forward holds the stack
    x = torch.randn(cfg.tokens, shape.hidden, device=device, dtype=TORCH_DTYPES[cfg.dtype])

    def build():
        return forward(x)
    return build, count_nodes(build)


def count_nodes(build):
    """Autograd nodes of build()'s graph, its leaves' AccumulateGrad left out."""
    seen, stack = set(), [build().grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return sum(1 for n in seen if type(n).__name__ != "AccumulateGrad")


def count_launches(build, device):
    """Kernel launches of one build() on CUDA (None on the CPU)."""
    if device.type != "cuda":
        return None
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        y = build()
        del y
    # cudaLaunchKernel, cudaLaunchKernelExC, and cuBLASLt's cuLaunchKernelEx
    return sum(1 for e in prof.events() if e.name.startswith("cu") and "LaunchKernel" in e.name)


def time_free(build, sync):
    """Host microseconds to drop the output of build() (its graph with it)."""
    y = build()
    sync()
    start = time.perf_counter()
    del y
    return (time.perf_counter() - start) * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--nodes", default="256,1024,4096", help="graph sizes (autograd nodes) of the chain cases")
    p.add_argument("--linear", default="8x64,2048x1024",
                   help="ROWSxWIDTH of the linear cases' activations (512 nodes each)")
    p.add_argument("--experts", default="64x8x2048x2048x1024",
                   help="EXPERTSxTOP_KxTOKENSxHIDDENxFFN of the experts_loop case (OLMoE's widths); empty: none")
    p.add_argument("--stack", default="", help="MODEL:STYLE[:SCALE] of a kernels/torch_stacks stack; empty: none")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    cases = {f"chain_{n}": chain_case(device, n) for n in (int(v) for v in args.nodes.split(","))}
    for shape in filter(None, args.linear.split(",")):
        rows, width = (int(v) for v in shape.split("x"))
        cases[f"linear_512_{rows}x{width}"] = linear_case(device, 512, rows, width, dtype)
    if args.experts:
        experts, top_k, tokens, hidden, ffn = (int(v) for v in args.experts.split("x"))
        cases[f"experts_loop_{experts}x{top_k}"] = experts_loop_case(device, experts, top_k, tokens, hidden, ffn, dtype)
    if args.stack:
        cases[f"stack_{args.stack.replace(':', '_')}"] = stack_case(device, args.stack,
                                                                    "bf16" if device.type == "cuda" else "fp32")
    probe = make_probe(device)
    for build, _ in cases.values():  # first calls load kernels and set up autograd
        time_free(build, sync)
    samples = {name: [] for name in cases}
    probes = []
    for _ in range(args.rounds):
        for name, (build, nodes) in cases.items():
            samples[name].append(time_free(build, sync) / nodes)
        probes.append(probe())
    results = []
    for name, (build, nodes) in cases.items():
        per_probe = [s / q for s, q in zip(samples[name], probes)]
        launches = count_launches(build, device)
        results.append({"case": name, "nodes": nodes, "launches": launches,
                        "us_per_node_p50": statistics.median(samples[name]), "us_per_node_min": min(samples[name]),
                        "probes_per_node_p50": statistics.median(per_probe), "us_per_node": samples[name]})
        if launches:
            results[-1]["us_per_launch_p50"] = statistics.median(samples[name]) * nodes / launches
        print(f"{name:<24} {nodes:>5} nodes, {launches} launches: {results[-1]['us_per_node_p50']:.3f} us per node "
              f"({results[-1]['probes_per_node_p50']:.3f} probes)", flush=True)
    record = record_header("moesim-torch-graph-free", device=args.device, rounds=args.rounds,
                           host_probe_us=probes, host_probe_us_p50=statistics.median(probes), results=results)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
