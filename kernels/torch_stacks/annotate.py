"""Profiler ranges on your own MoE model, so that `moesim calibrate --torch-trace` can learn its implementation
profile from a trace of it.

moesim attributes each traced kernel to an op of its layer DAG by the `moesim.L<layer>.<op>` record_function
range that holds its launch (kernels/torch_stacks/README.md, "Traces"). `annotate(model)` adds those ranges with
module hooks, finding each decoder layer's parts by the names that Hugging Face transformers, GPT-2-style and
Megatron-style models give them; `names=` maps what it does not know. Forward only: backward kernels find their
op through autograd. Then `profile_step` times the step without the profiler and traces it once:

    from torch_stacks.annotate import annotate, profile_step
    annotate(model)                                  # or annotate(model, names={"moe": "mixer"})
    r = profile_step(lambda: model(inputs_embeds=x).last_hidden_state, backward=my_backward,  # see below
                     trace="mine.trace.json.gz")
    print(r["calibrate_flags"])   # --untraced-issue-ms A --untraced-forward-ms B --host-probe-us P for calibrate

where my_backward(out) runs the backward and clears the gradients as a training step ends
(`model.zero_grad(set_to_none=True)`): else each step adds into every parameter's .grad, kernels no layer op
launches (calibrate reports them as unattributed). A part it cannot find raises ValueError naming the layer's class
and its children, so you can pass `names`.
"""
import gzip
import json
import os
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from .distributed import RunContext
from .host_probe import make_probe
from .provenance import gpu_state
from .timing import summary, time_steps

# Where decoder layers live (dotted attribute paths), and each part's usual names, first match wins.
LAYER_LISTS = ("model.layers", "layers", "model.decoder.layers", "decoder.layers", "transformer.h", "h",
               "transformer.layers", "transformer.blocks", "blocks")
PARTS = {
    "attn_norm": ("input_layernorm", "ln_1", "attention_norm", "attn_norm", "norm1", "pre_attention_layernorm",
                  "ln_attn", "self_attn_layer_norm"),
    "attention": ("self_attn", "attn", "attention", "self_attention"),
    "mlp_norm": ("post_attention_layernorm", "ln_2", "ffn_norm", "mlp_norm", "norm2", "pre_mlp_layernorm",
                 "pre_feedforward_layernorm", "final_layer_norm"),
    "mlp": ("mlp", "block_sparse_moe", "feed_forward", "moe", "ffn", "sparse_moe"),
}
MOE_PARTS = {"gate": ("gate", "router", "gating"), "routed_experts": ("experts",),
             "shared_experts": ("shared_experts", "shared_expert", "shared_mlp")}
OUT_PROJECTIONS = ("o_proj", "out_proj", "c_proj", "dense", "wo", "linear_proj")
# Per-head query/key norms (Qwen3, OLMoE): their own range, so that a profile learned from a model with them
# charges them only to models that have them (attn_qkv steps `when: qk_norm`).
QK_NORMS = ("q_norm", "k_norm", "q_layernorm", "k_layernorm")
FINAL_NORMS = ("model.norm", "norm", "model.final_layernorm", "final_layernorm", "model.decoder.final_layer_norm",
               "decoder.final_layernorm", "transformer.ln_f", "ln_f")


def _path(module, dotted):
    for name in dotted.split("."):
        module = getattr(module, name, None)
        if not isinstance(module, torch.nn.Module):
            return None
    return module


def _first(module, names):
    return next((m for m in (_path(module, n) for n in names) if m is not None), None)


def _part(module, names, op, candidates):
    """Op's module inside `module`: the path `names` gives it, else the first of its usual names there."""
    if op not in names:
        return _first(module, candidates)
    found = _path(module, names[op])
    if found is None:
        raise ValueError(f"annotate: names['{op}'] = '{names[op]}': no such module in {type(module).__name__}")
    return found


def _is_linear(module):
    # nn.Linear and its framework kin (transformers' Conv1D, Megatron's and TE's parallel linears)
    name = type(module).__name__
    return isinstance(module, torch.nn.Linear) or name == "Conv1D" or name.endswith("Linear")


def add_range(module, name):
    """Pushes profiler range `name` around every forward call of module; returns the hooks' handles."""
    def enter(mod, args):
        mod._moesim_ranges = getattr(mod, "_moesim_ranges", [])
        mod._moesim_ranges.append(record_function(name))
        mod._moesim_ranges[-1].__enter__()

    def leave(mod, args, output):
        mod._moesim_ranges.pop().__exit__(None, None, None)

    return [module.register_forward_pre_hook(enter), module.register_forward_hook(leave)]


def layer_parts(layer, names=None):
    """moesim op -> module of one decoder layer: attn_norm, attention, attn_qkv (a list), qk_norm (a list, where the
    attention normalizes queries and keys per head), attn_out, mlp_norm, and moe with gate, routed_experts,
    shared_experts (where the MLP has experts) or dense_ffn (where it has none).
    `names` (op -> dotted path inside the layer) overrides the usual names."""
    names = names or {}
    found = {}
    for op, candidates in PARTS.items():
        found[op] = _part(layer, names, op, candidates)
    missing = [op for op in ("attention", "mlp") if found[op] is None]
    if missing:
        children = ", ".join(n for n, _ in layer.named_children())
        raise ValueError(f"annotate: {type(layer).__name__} has no {' or '.join(missing)} module among its children "
                         f"({children}); pass names={{'{missing[0]}': 'CHILD'}}")
    attention, mlp = found.pop("attention"), found.pop("mlp")
    parts = {op: m for op, m in found.items() if m is not None}
    parts["attention"] = attention
    out = _part(attention, names, "attn_out", OUT_PROJECTIONS)
    if out is not None:
        parts["attn_out"] = out
    parts["attn_qkv"] = [m for n, m in attention.named_children() if _is_linear(m) and m is not out]
    qk_norms = [m for m in (_path(attention, n) for n in QK_NORMS) if m is not None]
    if qk_norms:
        parts["qk_norm"] = qk_norms
    experts = _part(mlp, names, "routed_experts", MOE_PARTS["routed_experts"])
    if experts is None:
        parts["dense_ffn"] = mlp
        return parts
    # Experts kept as a ModuleList (transformers 4.x, many hand-written stacks) are called one by one: each gets
    # the range, and the loop's own indexing between the calls stays in `moe`'s remainder (read as unpermute).
    listed = isinstance(experts, (torch.nn.ModuleList, torch.nn.ModuleDict))
    parts["moe"], parts["routed_experts"] = mlp, list(experts.children()) if listed else experts
    for op in ("gate", "shared_experts"):
        m = _part(mlp, names, op, MOE_PARTS[op])
        if m is not None:
            parts[op] = m
    return parts


def annotate(model, layers=None, names=None, final_norm=None):
    """Adds the `moesim.L<i>.<op>` ranges to every decoder layer of model (the ModuleList at dotted path `layers`,
    else the first of LAYER_LISTS) and `final_norm` to its final norm. Returns the hooks' handles (`.remove()`)."""
    stack = _path(model, layers) if layers else _first(model, LAYER_LISTS)
    if not isinstance(stack, torch.nn.ModuleList):
        raise ValueError(f"annotate: no list of decoder layers in {type(model).__name__} "
                         f"(looked for {', '.join(LAYER_LISTS)}); pass layers='PATH'")
    every_layer = [layer_parts(layer, names) for layer in stack]  # all found before any hook: an error adds none
    handles = []
    for i, parts in enumerate(every_layer):
        for op, module in parts.items():
            for m in (module if isinstance(module, list) else [module]):
                handles += add_range(m, f"moesim.L{i}.{op}")
    norm = _path(model, final_norm) if final_norm else _first(model, FINAL_NORMS)
    if norm is not None and norm not in list(stack.modules()):
        # the last layer's residual add runs just before it: the range keeps that add the layer's
        handles += add_range(norm, f"moesim.L{len(stack) - 1}.final_norm")
    return handles


def _step(forward, backward):
    """timing.time_steps' step: returns when its forward returned (its host clock)."""
    def step():
        out = forward()
        forward_returned = time.perf_counter()
        if backward is not None:
            backward(out)
        return forward_returned
    return step


def _context(ctx):
    if ctx is not None:
        return ctx
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    return RunContext(0, 1, device)


def timed_steps(forward, backward=None, iters=10, warmup=3, ctx=None):
    """`iters` steps after `warmup`, as torch_stacks times its stacks (timing.time_steps: each step from an idle
    GPU, CUDA events around it, the host probe after it, outside its timing). Returns the step's time (p50, min,
    max; ms), the medians of its issue, its forward's issue (ms) and the probe (us), and every step's figures
    (`per_step`, what own_records.write_record keeps). `ctx`: the process group's distributed.RunContext when the
    model runs on several processes (each step starts after a barrier over them); default, this one process."""
    ctx = _context(ctx)
    before = gpu_state(ctx.device)
    per_step = time_steps([_step(forward, backward)], ctx, warmup, iters, make_probe(ctx.device))[0]
    return {"step_ms": summary(per_step["gpu_ms"]), "issue_ms": statistics.median(per_step["issue_ms"]),
            "forward_issue_ms": statistics.median(per_step["forward_issue_ms"]),
            "host_probe_us": statistics.median(per_step["host_probe_us"]), "iters": iters, "warmup": warmup,
            "per_step": per_step, "gpu_before": before, "gpu_after": gpu_state(ctx.device)}


def profile_step(forward, backward=None, trace="step.trace.json.gz", warmup=3, iters=10, ctx=None):
    """Times `iters` steps without the profiler (timed_steps), then traces one step (after a profiled warm-up
    step) inside the `moesim.step`/`moesim.forward`/`moesim.backward` ranges to `trace` (gzip'd Chrome-trace
    JSON). forward() returns what backward(out) differentiates; no backward: an inference step. The result has the
    untraced timing (`timing`) and the flags it gives calibrate. On several processes (`ctx`) each traces its own
    step to its own `trace` (own_records.trace_path)."""
    ctx = _context(ctx)
    timing = timed_steps(forward, backward, iters, warmup, ctx)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if ctx.is_cuda else [])
    # The profiler's first step pays its own start: traced alone, a step's first launch came 2.1-3.3 ms late on
    # H100/H200 (2026-11-28 own-model traces; the torch_stacks runs, which warm it up, 0.1-0.6 ms). One profiled
    # warm-up step, left out of the trace, takes it.
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "trace.json")
        with profile(activities=activities, record_shapes=True, schedule=schedule(wait=0, warmup=1, active=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(plain)) as prof:
            for _ in range(2):
                ctx.barrier()
                with record_function("moesim.step"):
                    with record_function("moesim.forward"):
                        out = forward()
                    if backward is not None:
                        with record_function("moesim.backward"):
                            backward(out)
                ctx.synchronize()
                prof.step()
        with open(plain, "rb") as src, gzip.open(trace, "wb") as dst:
            dst.write(src.read())
    result = {"trace": trace, "untraced_issue_ms": timing["issue_ms"],
              "untraced_forward_ms": timing["forward_issue_ms"], "host_probe_us": timing["host_probe_us"],
              "iters": iters, "timing": timing}
    result["calibrate_flags"] = (f"--untraced-issue-ms {result['untraced_issue_ms']:.3f} "
                                 f"--untraced-forward-ms {result['untraced_forward_ms']:.3f} "
                                 f"--host-probe-us {result['host_probe_us']:.2f}")
    return result


def ranges_in(trace):
    """The moesim range names of a trace written by profile_step, host side (for checks). Kineto's traces tag them
    `user_annotation`; a torch without Kineto (Debian's CPU build) writes a bare list of events."""
    with gzip.open(trace, "rt") as f:
        data = json.load(f)
    if isinstance(data, list):
        return [e["name"] for e in data if e.get("ph") == "X" and e.get("name", "").startswith("moesim.")]
    return [e["name"] for e in data["traceEvents"] if e.get("cat") == "user_annotation"]
