#!/usr/bin/env python3
"""Host cost of an eager op as real framework code issues it: dense transformer stacks that are not MoE stacks and
not moesim's (transformers' GPT-2, OPT and BERT built from configs, PyTorch's own nn.TransformerEncoder), at sizes
where the host sets the pace, timed per kernel launch, beside the warm-loop layer cases of torch_dispatch_bench and
the host probe in the same process.

A warm loop of a few ops (torch_dispatch_bench) and a chain of distinct ops (torch_step_context) leave out what a
framework's step runs around its ops: nn.Module calls, the framework's own Python (shape logic, views, masks,
config branches), autograd nodes of many kinds, the caching allocator with many live tensors. This tool measures
it without any MoE stack: each model's forward with autograd recording (training), under no_grad (inference), and
the backward of that forward, each timed on the host (issue only: the device is synchronised outside the timed
part; the kernels are tiny, so the launch queue never fills). Each model is built at two depths (`--depths`); a
layer's cost is the difference over the kernel launches (kernels, memcpy and memset calls, counted in a profiled
pass) and the aten ops (counted by a dispatch mode) that the extra layers add, so what a model call costs once
(inputs, masks, outputs) cancels. Backward is also given per forward launch, the unit of the layer cases'.

    python3 kernels/tools/torch_framework_context.py --out framework-context.json

Rounds alternate the models, and the host probe runs after each round (the record keeps every sample), so a
drift of the host's speed hits all of them alike and shows. Models whose library is missing are skipped (the
record lists those measured); the layer cases need only torch. On a CPU there are no launches: figures are per aten
op there.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_dispatch_bench import layer_cases, record_header, time_case  # noqa: E402
from torch_stacks.host_probe import make_probe  # noqa: E402 (torch_dispatch_bench puts kernels/ on the path)

LAUNCH = re.compile(r"^(cuda|cu)(LaunchKernel|LaunchKernelEx|LaunchKernelExC|LaunchCooperativeKernel|MemcpyAsync|"
                    r"MemsetAsync)(_v\d+)?$")


def transformers_models(width, layers, heads, ffn, vocab, positions):
    """name -> nn.Module taking input ids, from transformers' configs (random weights: nothing is downloaded)."""
    try:
        import transformers as tf
    except ImportError:
        return {}
    no_dropout = {"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
    configs = {
        "gpt2": (tf.GPT2Model, tf.GPT2Config(n_embd=width, n_layer=layers, n_head=heads, n_inner=ffn,
                                             vocab_size=vocab, n_positions=positions, **no_dropout)),
        "opt": (tf.OPTModel, tf.OPTConfig(hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads,
                                          ffn_dim=ffn, vocab_size=vocab, max_position_embeddings=positions,
                                          word_embed_proj_dim=width, dropout=0.0, attention_dropout=0.0)),
        "bert": (tf.BertModel, tf.BertConfig(hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads,
                                             intermediate_size=ffn, vocab_size=vocab,
                                             max_position_embeddings=positions, hidden_dropout_prob=0.0,
                                             attention_probs_dropout_prob=0.0)),
    }
    models = {}
    for name, (cls, config) in configs.items():
        try:
            models[name] = cls(config)
        except Exception as error:  # a transformers version without this model's arguments: say so, measure the rest
            print(f"torch_framework_context: {name} skipped: {error}", file=sys.stderr)
    return models


class TorchEncoder(torch.nn.Module):
    """PyTorch's nn.TransformerEncoder (pre-norm) behind an embedding, taking input ids like the others."""

    def __init__(self, width, layers, heads, ffn, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        layer = torch.nn.TransformerEncoderLayer(width, heads, ffn, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids):
        return self.encoder(self.embed(ids))


def hidden_of(output):
    return output if isinstance(output, torch.Tensor) else output.last_hidden_state


def launches(fn):
    """Kernel launches (and memcpy/memset calls) the host makes while fn runs, from a profiled call."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        result = fn()
    return sum(e.count for e in prof.key_averages() if LAUNCH.match(e.key)), result


class AtenOps(TorchDispatchMode):
    """Counts the aten ops that reach the dispatcher's bottom (views and kernel-launching ops alike)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def aten_ops(fn):
    with AtenOps() as counter:
        result = fn()
    return counter.count, result


class Case:
    """One model: its forward (autograd recording), no_grad forward and backward, timed and counted."""

    def __init__(self, model, ids, sync):
        self.model, self.ids, self.sync = model, ids, sync
        self.grad = torch.ones_like(hidden_of(model(ids)))
        for _ in range(5):  # warm-up: kernels loaded, allocator blocks cached
            self.sample()
        self.forward_launches, out = launches(lambda: hidden_of(model(ids)))
        self.backward_launches, _ = launches(lambda: out.backward(self.grad))
        self.no_grad_launches, _ = launches(self.no_grad_forward)
        self.forward_ops, out = aten_ops(lambda: hidden_of(model(ids)))
        self.backward_ops, _ = aten_ops(lambda: out.backward(self.grad))
        self.no_grad_ops, _ = aten_ops(self.no_grad_forward)
        self.samples = {"forward": [], "backward": [], "no_grad": []}

    def no_grad_forward(self):
        with torch.no_grad():
            return self.model(self.ids)

    def sample(self):
        self.sync()
        start = time.perf_counter()
        out = hidden_of(self.model(self.ids))
        issued = time.perf_counter()
        out.backward(self.grad)
        done = time.perf_counter()
        self.sync()
        start_no_grad = time.perf_counter()
        self.no_grad_forward()
        end_no_grad = time.perf_counter()
        self.sync()
        return {"forward": issued - start, "backward": done - issued, "no_grad": end_no_grad - start_no_grad}

    def record(self):
        for key, value in self.sample().items():
            self.samples[key].append(value * 1e6)

    def summary(self):
        per = {"forward": self.forward_launches, "backward": self.backward_launches, "no_grad": self.no_grad_launches}
        ops = {"forward": self.forward_ops, "backward": self.backward_ops, "no_grad": self.no_grad_ops}
        out = {"launches": per, "aten_ops": ops}
        for mode, values in self.samples.items():
            out[f"{mode}_us"] = {"p50": statistics.median(values), "min": min(values)}
            out[f"{mode}_per_aten_op"] = {k: v / ops[mode] for k, v in out[f"{mode}_us"].items()}
            if per[mode]:
                out[f"{mode}_per_launch"] = {k: v / per[mode] for k, v in out[f"{mode}_us"].items()}
        if per["forward"]:
            out["backward_per_forward_launch"] = {k: v / per["forward"] for k, v in out["backward_us"].items()}
        return out


def layer_case_costs(device, sync):
    """torch_dispatch_bench's layer cases here, warm: the mean over cases of the per-op forward and backward (p50)."""
    forward, backward = [], []
    for fn, ops in layer_cases(device).values():
        grad_out = fn().detach().clone()

        def both(fn=fn, grad_out=grad_out):
            fn().backward(grad_out)
        for _ in range(200):
            both()
        f = time_case(fn, 500, 9, sync)["p50"]
        forward.append(f / ops)
        backward.append((time_case(both, 500, 9, sync)["p50"] - f) / ops)
    return {"forward_per_op": statistics.mean(forward), "backward_per_op": statistics.mean(backward)}


def per_layer(shallow, deep):
    """A layer's cost: the deeper model's time over the shallower's, per launch and per aten op the layers add
    (what each call costs once, its inputs, masks and outputs, cancels)."""
    out = {}
    for mode in ("forward", "backward", "no_grad"):
        extra = deep[f"{mode}_us"]["p50"] - shallow[f"{mode}_us"]["p50"]
        for unit, name in (("launches", "launch"), ("aten_ops", "aten_op")):
            added = deep[unit][mode] - shallow[unit][mode]
            if added > 0:
                out[f"{mode}_per_{name}"] = extra / added
    if deep["launches"]["forward"] > shallow["launches"]["forward"]:
        out["backward_per_forward_launch"] = (deep["backward_us"]["p50"] - shallow["backward_us"]["p50"]) / (
            deep["launches"]["forward"] - shallow["launches"]["forward"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--depths", default="2,6", help="two layer counts: a layer's cost is their difference's")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    depths = sorted(int(d) for d in args.depths.split(","))
    if len(depths) != 2 or depths[0] < 1 or depths[0] == depths[1]:
        sys.exit("torch_framework_context: --depths takes two different layer counts, e.g. 2,6")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    probe = make_probe(device)
    probes = [probe()]
    cases = {}
    for layers in depths:
        shape = dict(width=args.width, layers=layers, heads=4, ffn=4 * args.width, vocab=256)
        models = transformers_models(**shape, positions=4 * args.tokens)
        models["torch_encoder"] = TorchEncoder(**shape)
        ids = torch.randint(0, shape["vocab"], (1, args.tokens), device=device)
        for name, model in models.items():
            model = model.to(device=device, dtype=getattr(torch, args.dtype)).train()
            cases[name, layers] = Case(model, ids, sync)
    for round_ in range(args.rounds):
        for key in (cases if round_ % 2 == 0 else reversed(list(cases))):
            cases[key].record()
        probes.append(probe())
    models = sorted({name for name, _ in cases})
    results = {name: {f"layers_{d}": cases[name, d].summary() for d in depths} for name in models}
    for name, r in results.items():
        r["per_layer"] = per_layer(r[f"layers_{depths[0]}"], r[f"layers_{depths[1]}"])
    layer = layer_case_costs(device, sync)
    probes.append(probe())
    unit = "launch" if all(r["per_layer"].get("forward_per_launch") for r in results.values()) else "aten_op"
    modes = ("forward", "backward", "no_grad")
    for name, r in results.items():
        deep = r[f"layers_{depths[1]}"]
        whole = "/".join(f"{deep[f'{m}_per_{unit}']['p50']:.2f}" for m in modes)
        layer_cost = "/".join(f"{r['per_layer'][f'{m}_per_{unit}']:.2f}" for m in modes)
        counts = {k: f"{deep[k]['forward']}/{deep[k]['backward']}" for k in ("launches", "aten_ops")}
        print(f"{name:14s} at {depths[1]} layers: launches {counts['launches']} forward/backward, aten ops "
              f"{counts['aten_ops']}; whole call us per {unit} {whole}; a layer's, per {unit}: {layer_cost}")
    print(f"layer cases (warm): forward {layer['forward_per_op']:.2f} us per op, "
          f"backward {layer['backward_per_op']:.2f}")
    print(f"host probe {statistics.median(probes):.2f} us per op (median of {len(probes)}, range "
          f"{min(probes):.2f}-{max(probes):.2f})")
    record = record_header("moesim-torch-framework-context", device=args.device, dtype=args.dtype,
                           rounds=args.rounds, width=args.width, depths=depths, tokens=args.tokens,
                           host_probe_us={"median": statistics.median(probes), "samples": probes},
                           layer_cases=layer, models=results)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
