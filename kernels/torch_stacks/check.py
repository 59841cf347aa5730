"""Numerical checks of the stacks (CPU or GPU, any EP): exit 0 when every check passes.

  python3 -m torch_stacks.check --device cpu                                   (EP 1)
  python3 -m torch_stacks.launch --nproc 2 --module torch_stacks.check -- --device cpu   (EP 2)

1. MoE block: loop and grouped (permute, Dispatch, experts, Combine, unpermute) against a dense reference
   that runs every token through every expert and weights it by the router (zero where not chosen), for
   balanced and zipf routing.
2. Whole stack, each style and schedule, forward and backward: each rank runs its tokens at EP = world;
   rank 0 runs every rank's tokens through a plain sequential reference of the schedule's dataflow (dense
   MoE, no all-to-all, no overlap) built from the same seeds, and compares outputs, input gradients and
   the routed experts' weight gradients.
Relative error = |a - b| / |b| (Frobenius); tolerance 1e-4 in fp32 and 3e-2 in bf16.
"""
import argparse
import sys

import torch

from .bench import build_native, model_path
from .config import RunConfig
from .distributed import close_context, init_context
from .experts import LocalExperts
from .layers import INIT_STD, swiglu
from .model_spec import load_layer_shape, scaled
from .moe import MoeBlock
from .routing import forced_assignment, parse_routing

TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 3e-2}


def unit_gain(module):
    """Rescales every weight matrix to std 1/sqrt(fan_in), so each sub-block's output is as large as its input
    (at the stacks' init std 0.02 the routed experts' output is ~1e-3 of the residual, which would hide their
    errors in the stack's output)."""
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() >= 2:
                p.mul_(1.0 / (INIT_STD * p.shape[-1] ** 0.5))
    return module


def rel_error(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def dense_moe(m, router, experts):
    """sum_k w[t,k] MLP_{chosen[t,k]}(m[t]), every expert applied to every token."""
    chosen, weights = router(m)
    out = torch.zeros_like(m)
    for e in range(experts.count):
        coefficient = (weights * (chosen == e)).sum(dim=1, keepdim=True)
        out = out + coefficient * swiglu(m, experts.gate_up[e], experts.down[e])
    return out


def run_block(block, m):
    state = block.route(m)
    block.permute(state)
    block.launch_dispatch(state)
    block.wait_dispatch(state)
    block.routed_experts(state)
    block.launch_combine(state)
    block.wait_combine(state)
    return block.unpermute(state)


def check_block(shape, ctx, dtype, routing, tokens):
    kind, exponent = parse_routing(routing)
    assignment = forced_assignment(kind, exponent, tokens, shape.experts, shape.top_k, 7000 + ctx.rank)
    assignment = assignment.to(ctx.device) if assignment is not None else None
    g = torch.Generator(device=ctx.device).manual_seed(99 + ctx.rank)
    m = torch.randn(tokens, shape.hidden, generator=g, device=ctx.device).to(dtype)
    everything = unit_gain(LocalExperts(shape, 0, shape.experts, dtype, ctx.device, 5 + 100))
    results = []
    for style in ("loop", "grouped"):
        block = unit_gain(MoeBlock(shape, style, ctx.world, ctx.rank, None, dtype, ctx.device, 5, assignment))
        with torch.no_grad():
            out = run_block(block, m)
            ref = dense_moe(m, block.router, everything)
        results.append((f"moe block {style} ep{ctx.world} {routing}", rel_error(out, ref)))
    return results


def reference_stack(stack, x, schedule):
    """The schedule's dataflow written plainly: dense MoE, no communication, no overlap."""
    def attention(layer, inp):
        return layer.attention.out(layer.attention.core(*layer.attention.qkv(layer.attn_norm(inp))))

    def moe(layer, inp):
        m = layer.mlp_norm(inp)
        shared = layer.moe.shared(m) if layer.moe.shared is not None else 0
        return dense_moe(m, layer.moe.router, layer.moe.experts), shared

    if schedule == "regular":
        for layer in stack.layers:
            h = x + attention(layer, x)
            routed, shared = moe(layer, h)
            x = h + routed + shared
        return x
    partial, routed = x, 0
    for layer in stack.layers:
        full = partial + routed
        attn = attention(layer, partial)
        routed, shared = moe(layer, full)
        partial = full + attn + shared
    return partial + routed


def check_stack(shape, ctx, dtype, style, schedule):
    cfg = RunConfig(model=shape.name, style=style, schedule=schedule, tokens=64, seq=32, layers=3,
                    routing="natural", dtype={torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype])
    stack = unit_gain(build_native(cfg, shape, ctx)[0])
    g = torch.Generator(device=ctx.device).manual_seed(11 + ctx.rank)
    x = torch.randn(cfg.tokens, shape.hidden, generator=g, device=ctx.device).to(dtype).requires_grad_()
    grad = torch.randn(cfg.tokens, shape.hidden, generator=g, device=ctx.device).to(dtype)
    y = stack(x)
    y.backward(grad)
    mine = {"y": y.detach(), "x.grad": x.grad, "x": x.detach(), "grad": grad,
            "experts.grad": [(layer.moe.experts.gate_up.grad, layer.moe.experts.down.grad) for layer in stack.layers]}
    gathered = ctx.gather({k: (v.cpu() if torch.is_tensor(v) else [(a.cpu(), b.cpu()) for a, b in v])
                           for k, v in mine.items()})
    if ctx.rank != 0:
        return []
    full = RunConfig(**dict(cfg.as_dict(), tokens=cfg.tokens * ctx.world))
    single = type(ctx)(0, 1, ctx.device)
    ref_stack = unit_gain(build_native(full, shape, single)[0])
    cat = lambda key: torch.cat([r[key] for r in gathered]).to(ctx.device)  # noqa: E731
    x_all = cat("x").requires_grad_()
    y_ref = reference_stack(ref_stack, x_all, schedule)
    y_ref.backward(cat("grad"))
    name = f"stack {style} {schedule} ep{ctx.world}"
    results = [(f"{name} output", rel_error(cat("y"), y_ref)),
               (f"{name} input grad", rel_error(cat("x.grad"), x_all.grad))]
    for i, layer in enumerate(ref_stack.layers):
        for j, ref_grad in enumerate((layer.moe.experts.gate_up.grad, layer.moe.experts.down.grad)):
            got = torch.cat([r["experts.grad"][i][j] for r in gathered]).to(ctx.device)
            results.append((f"{name} layer {i} expert {'gate_up down'.split()[j]} grad", rel_error(got, ref_grad)))
    return results


def main(argv=None):
    p = argparse.ArgumentParser(prog="torch_stacks.check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cpu")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    p.add_argument("--models", default="qwen3-30b-a3b,deepseek-v2-lite,llama4-scout")
    p.add_argument("--scale", type=int, default=32)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    ctx = init_context(args.device)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    results = []
    try:
        for model in args.models.split(","):
            shape = scaled(load_layer_shape(model_path(model)), args.scale)
            for routing in ("balanced", "zipf:1.2"):
                results += [(f"{model} {n}", e) for n, e in check_block(shape, ctx, dtype, routing, 96)]
            for style in ("loop", "grouped"):
                for schedule in ("regular", "farskip"):
                    results += [(f"{model} {n}", e) for n, e in check_stack(shape, ctx, dtype, style, schedule)]
    finally:
        close_context(ctx)
    worst = 0.0
    for name, error in results:
        ok = error <= TOLERANCE[dtype]
        worst = max(worst, error)
        if ctx.rank == 0 or "moe block" in name:
            print(f"rank {ctx.rank} {'ok  ' if ok else 'FAIL'} {error:.2e}  {name}")
    bad = [n for n, e in results if not e <= TOLERANCE[dtype]]
    print(f"# rank {ctx.rank}: {len(results)} checks, {len(bad)} failed, worst relative error {worst:.2e} "
          f"(tolerance {TOLERANCE[dtype]:.0e})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
