"""transformers' MoE models, each shrunk to a tiny config, traced for one training step the way a user traces their
own model: `torch.profiler.profile(with_stack=True, record_shapes=True)`, no moesim ranges.

What it is for: moesim reads a plain trace's ops from the module calls the Python tracer records
(traces/ModuleRanges.hpp), by class name and order. Each architecture transformers ships names its modules its own
way; these traces show what moesim makes of each (tests/traces: ModuleRanges.TransformersZoo).

    python3 kernels/tools/trace_transformers_zoo.py --out DIR [--types mixtral,qwen3_moe] [--experts eager]

Per model type: DIR/<type>.<experts>.trace.json.gz and one line of DIR/zoo.jsonl (status, model class, the module
classes the step called, or the error). A type whose config or model cannot be built at these sizes is recorded
as failed and the rest go on.
"""
import argparse
import gzip
import json
import os
import shutil
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

TYPES = ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2", "deepseek_v3", "gpt_oss", "granitemoe",
         "jetmoe", "phimoe", "qwen3_next", "glm4_moe", "ernie4_5_moe", "hunyuan_v1_moe", "minimax", "llama4_text",
         "dots1", "flex_olmo", "granitemoehybrid", "dbrx")
# Tiny widths, each set only where the model's config has the key: 2 layers of 8 experts, top-2.
TINY = dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=64, num_experts=8, num_local_experts=8,
            n_routed_experts=8, num_experts_per_tok=2, moe_topk=2, vocab_size=1024, max_position_embeddings=1024,
            first_k_dense_replace=1, kv_lora_rank=64, q_lora_rank=64, qk_rope_head_dim=16, qk_nope_head_dim=32,
            v_head_dim=32, n_shared_experts=1, shared_expert_intermediate_size=256,
            moe_shared_expert_intermediate_size=256, n_group=1, topk_group=1, mlp_only_layers=[], decoder_sparse_step=1,
            sliding_window=None, linear_num_value_heads=4, linear_num_key_heads=2, linear_key_head_dim=32,
            linear_value_head_dim=32, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def tiny_config(model_type):
    from transformers import AutoConfig  # noqa: PLC0415 (the device has it)

    defaults = AutoConfig.for_model(model_type).to_dict()
    kwargs = {k: v for k, v in TINY.items() if k in defaults}
    if "qk_rope_head_dim" in defaults:  # MLA: the rotary embedding spans the rope part of a head; no GQA
        kwargs.update(head_dim=kwargs["qk_rope_head_dim"], num_key_value_heads=kwargs["num_attention_heads"])
    if "layer_types" in defaults and defaults["layer_types"]:  # one layer of each of the first two kinds
        kinds = list(dict.fromkeys(defaults["layer_types"]))[:2]
        kwargs["layer_types"] = (kinds * 2)[:2]
    return AutoConfig.for_model(model_type, **kwargs)


def trace_one(model_type, experts, out, device):
    from transformers import AutoModel  # noqa: PLC0415

    config = tiny_config(model_type)
    kwargs = dict(attn_implementation="sdpa", dtype=torch.bfloat16)
    if experts != "default":
        kwargs["experts_implementation"] = experts
    with torch.device(device):
        try:
            model = AutoModel.from_config(config, **kwargs)
        except ValueError as e:  # a model without an SDPA attention (gpt_oss) runs its own
            if "attention implementation" not in str(e):
                raise
            model = AutoModel.from_config(config, **dict(kwargs, attn_implementation="eager"))
    model = model.to(device=device, dtype=torch.bfloat16)
    x = torch.randn(2, 128, config.hidden_size, device=device, dtype=torch.bfloat16)
    grad = torch.randn_like(x)
    classes = set()
    hooks = [m.register_forward_pre_hook(lambda mod, args: classes.add(type(mod).__name__)) for m in model.modules()]

    def step():
        y = model(inputs_embeds=x, use_cache=False).last_hidden_state
        y.backward(grad)
        model.zero_grad(set_to_none=True)
    step()
    for h in hooks:
        h.remove()
    torch.cuda.synchronize()
    raw = os.path.join(out, f"{model_type}.{experts}.trace.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, with_stack=True,
                 schedule=schedule(wait=0, warmup=1, active=1),
                 on_trace_ready=lambda prof: prof.export_chrome_trace(raw)) as p:
        for _ in range(2):
            step()
            torch.cuda.synchronize()
            p.step()
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    return {"model": type(model).__name__, "attn_implementation": getattr(config, "_attn_implementation", None),
            "experts_implementation": getattr(config, "_experts_implementation", None),
            "classes": sorted(classes), "trace": os.path.basename(raw) + ".gz"}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--types", default=",".join(TYPES))
    p.add_argument("--experts", default="default", help="default, eager or grouped_mm")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import transformers  # noqa: PLC0415
    with open(os.path.join(args.out, "zoo.jsonl"), "a", encoding="utf-8") as log:
        for model_type in args.types.split(","):
            began = time.monotonic()
            row = {"type": model_type, "experts": args.experts, "transformers": transformers.__version__,
                   "torch": torch.__version__}
            try:
                row.update(status="ok", **trace_one(model_type, args.experts, args.out, "cuda"))
            except Exception as e:  # noqa: BLE001 (one architecture's failure is data, the others go on)
                row.update(status="failed", error=f"{type(e).__name__}: {e}".splitlines()[0][:400])
            row["seconds"] = round(time.monotonic() - began, 1)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(model_type, row["status"], row.get("error", ""), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
