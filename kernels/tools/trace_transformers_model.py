#!/usr/bin/env python3
"""Trace and time a transformers MoE model as a user would their own: ranges from torch_stacks.annotate, one traced
configuration for `moesim calibrate --torch-trace`, and untraced step times at other configurations to check what
the learned profile predicts. Random weights from a config (nothing is downloaded); the router routes as its random
weights say (moesim's `--routing uniform` is the nearest).

    python3 kernels/tools/trace_transformers_model.py --model-type olmoe --model-spec olmoe.json \\
        --config '{"hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16, "num_experts": 64,
                   "num_experts_per_tok": 8}' --trace 2048:2:train --time 4096:2:train,2048:4:forward --out DIR

writes one torch_stacks record per configuration to DIR (own_records: each step's times and the host probe after
it; the record names --model-spec, the moesim model spec you wrote for the model, and the style hf-eager or
hf-grouped_mm by the experts implementation) and the traced step beside its record, then prints the commands that
learn a profile from the trace and compare it with every record:

    moesim calibrate --torch-trace DIR/NAME.rank0.trace.json.gz --base h100 --impl-out mine.json --impl-name mine
    moesim validate --measured DIR --impl mine.json --steps

A configuration is TOKENS:LAYERS:PHASE (phase forward or train), one sequence of --seq tokens per TOKENS/--seq.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_stacks.annotate import annotate, profile_step, timed_steps  # noqa: E402 (kernels/ on the path first)
from torch_stacks.own_records import trace_path, write_record  # noqa: E402


def parse_config(text, seq):
    tokens, layers, phase = text.split(":")
    if phase not in ("forward", "train") or int(tokens) % seq or int(layers) < 1:
        sys.exit(f"trace_transformers_model: {text}: want TOKENS:LAYERS:PHASE, TOKENS a multiple of --seq {seq}, "
                 "LAYERS at least 1, PHASE forward or train")
    return int(tokens), int(layers), phase


def build(args, layers):
    from transformers import AutoConfig, AutoModel
    kwargs = dict(json.loads(args.config), num_hidden_layers=layers, max_position_embeddings=args.seq)
    config = AutoConfig.for_model(args.model_type, **kwargs)
    options = {"experts_implementation": args.experts} if args.experts else {}
    model = AutoModel.from_config(config, attn_implementation="sdpa", dtype=torch.bfloat16, **options)
    model = model.to("cuda").train()
    annotate(model)
    return model, config


def step_fns(model, config, tokens, seq, phase):
    x = torch.randn(tokens // seq, seq, config.hidden_size, device="cuda", dtype=torch.bfloat16)
    grad = torch.randn_like(x)

    def forward():  # moesim's phases: forward is a training forward (autograd recording), train adds backward
        return model(inputs_embeds=x, use_cache=False).last_hidden_state
    def backward(out):
        out.backward(grad)
        # as a training step ends (optimizer.zero_grad(set_to_none=True)): else the next backward adds into every
        # parameter's .grad, kernels no layer op launches
        model.zero_grad(set_to_none=True)
    return forward, backward if phase == "train" else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-type", required=True, help="transformers model type, e.g. olmoe, qwen2_moe")
    parser.add_argument("--model-spec", required=True, help="the moesim model spec (JSON) of the model")
    parser.add_argument("--config", default="{}", help="JSON of config arguments (sizes, experts)")
    parser.add_argument("--experts", default=None, help="experts_implementation (default: transformers')")
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--trace", required=True, help="the traced configuration TOKENS:LAYERS:PHASE")
    parser.add_argument("--time", default="", help="more configurations to time, comma-separated")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    traced = parse_config(args.trace, args.seq)
    # The traced configuration runs last: a process that has run the profiler issues later steps slower, and its
    # host probe rises more than its steps do (H200: OLMoE grouped_mm 11.1-11.7 ms before one profiled step,
    # 14.5-14.8 after, the probe 15-16 us -> 23 us; data/calibration/2026-11-28-nvidia-h200-profiler-aftermath).
    timed = [parse_config(c, args.seq) for c in args.time.split(",") if c]
    configs = [c for c in timed if c != traced] + [traced]
    models = {}
    for tokens, layers, phase in configs:
        if layers not in models:
            models[layers] = build(args, layers)
        model, config = models[layers]
        experts = getattr(model.config, "_experts_implementation", None) or args.experts or "grouped_mm"
        style = "hf-eager" if experts == "eager" else "hf-grouped_mm"
        where = dict(tokens=tokens, seq=args.seq, layers=layers, phase=phase)
        forward, backward = step_fns(model, config, tokens, args.seq, phase)
        trace = None
        if (tokens, layers, phase) == traced:  # its untraced steps are timed once, by profile_step
            trace = trace_path(args.out, args.model_spec, style, **where)
            timing = profile_step(forward, backward, trace=trace, iters=args.iters)["timing"]
        else:
            timing = timed_steps(forward, backward, args.iters)
        extra = {"implementation": "transformers", "transformers_model_type": args.model_type,
                 "transformers_config": json.loads(args.config), "experts_implementation": experts,
                 "attn_implementation": "sdpa", "transformers_version": __import__("transformers").__version__}
        path = write_record(args.out, args.model_spec, style, timing, trace=trace, extra=extra, **where)
        print(f"{path}: step p50 {timing['step_ms']['p50']:.3f} ms, issue {timing['issue_ms']:.3f} ms, "
              f"probe {timing['host_probe_us']:.2f} us")
        if trace:
            print(f"  moesim calibrate --torch-trace {trace} --base h100|h200 --impl-out LEARNED.json --impl-name NAME")
    print(f"moesim validate --measured {args.out} [--impl LEARNED.json] --steps")


if __name__ == "__main__":
    main()
