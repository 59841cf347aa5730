#!/usr/bin/env python3
"""Does profiling a step slow the process's later steps? transformers' OLMoE (one layer, T 2048, training step,
random weights), per experts implementation in one process: timed (A), then torch_stacks.annotate.profile_step (its
own untraced timing B, then one traced step), then timed twice more (C, D); the host probe after every step. Writes
each timing's medians and per-step figures to $OUT/aftermath.json (default /tmp) and prints the medians.

    python3 kernels/tools/torch_profiler_aftermath.py        # a CUDA machine with transformers
"""
import json
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import trace_transformers_model as ttm  # noqa: E402 (kernels/ and kernels/tools on the path first)
from torch_stacks.annotate import profile_step, timed_steps  # noqa: E402

OLMOE = ('{"hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16, '
         '"num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 256}')


def main():
    out = {}
    for experts in ("grouped_mm", "eager"):
        args = types.SimpleNamespace(model_type="olmoe", config=OLMOE, experts=experts, seq=2048)
        model, config = ttm.build(args, 1)
        forward, backward = ttm.step_fns(model, config, 2048, 2048, "train")
        rows = []
        for label in ("A", "B", "C", "D"):
            if label == "B":
                t = profile_step(forward, backward, trace=f"/tmp/{experts}.trace.json.gz")["timing"]
            else:
                t = timed_steps(forward, backward, 10)
            rows.append({"label": label, "issue_ms": t["issue_ms"], "forward_issue_ms": t["forward_issue_ms"],
                         "step_ms": t["step_ms"]["p50"], "host_probe_us": t["host_probe_us"],
                         "probes": t["per_step"]["host_probe_us"], "issues": t["per_step"]["issue_ms"]})
            print(f"{experts} {label} issue {t['issue_ms']:.2f} fwd {t['forward_issue_ms']:.2f} "
                  f"step {t['step_ms']['p50']:.2f} probe {t['host_probe_us']:.2f}", flush=True)
        out[experts] = rows
        del model
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "aftermath.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
