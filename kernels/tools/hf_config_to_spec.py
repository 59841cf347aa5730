#!/usr/bin/env python3
"""A moesim model spec from a Hugging Face transformers config.json of a MoE model (no torch, no download).

    python3 kernels/tools/hf_config_to_spec.py config.json [--name my-moe] [--out my-moe.json]

Reads the keys transformers' MoE configs use (Mixtral, Qwen2/3-MoE, Qwen3-Next, OLMoE, DeepSeek-V2/V3 and Kimi/
Moonlight, Llama-4's text_config, GLM-4-MoE, dots1, ...): attention (MLA where the config has kv_lora_rank), routed
and shared experts, leading dense layers (first_k_dense_replace, a leading mlp_only_layers run) or MoE every Nth layer
(decoder_sparse_step, interleave_moe_layer_step). Qwen2-MoE's and Qwen3-Next's sigmoid gate on the shared expert is
`moe.shared_gate`. Sliding-window and chunked layers (layer_types, sliding_window, Llama-4's attention_chunk_size and
NoPE layers) are `attention.window`. What moesim's spec cannot say is printed on stderr (q/k/v biases,
linear-attention layers or windows in no every-Nth pattern, MoE layers that are not a leading dense run or every
Nth): the spec is then the nearest moesim can simulate, and `source` says what was left.
Exit 2 with one line for a config that is not a MoE model's.
"""
import argparse
import json
import os
import sys

# model types whose attention normalizes queries and keys (moesim's attention.qk_norm)
QK_NORM_TYPES = ("qwen3_moe", "qwen3_next", "olmoe", "flex_olmo")


class ConfigError(ValueError):
    pass


def _first(cfg, *keys):
    return next((cfg[k] for k in keys if cfg.get(k) is not None), None)


def _need(cfg, key, file):
    if not isinstance(cfg.get(key), int) or cfg[key] <= 0:
        raise ConfigError(f"{file}: /{key}: expected a positive integer, got {cfg.get(key)!r}")
    return cfg[key]


def _attention(cfg, model_type, file):
    heads = _need(cfg, "num_attention_heads", file)
    if cfg.get("kv_lora_rank"):  # DeepSeek's multi-head latent attention
        return {"type": "mla", "heads": heads, "kv_heads": heads, "head_dim": _need(cfg, "qk_nope_head_dim", file),
                "kv_lora_rank": cfg["kv_lora_rank"], "q_lora_rank": cfg.get("q_lora_rank") or 0,
                "rope_head_dim": _need(cfg, "qk_rope_head_dim", file), "v_head_dim": _need(cfg, "v_head_dim", file)}
    kv_heads = cfg.get("num_key_value_heads") or heads
    attention = {"type": "mha" if kv_heads == heads else "gqa", "heads": heads, "kv_heads": kv_heads,
                 "head_dim": cfg.get("head_dim") or cfg["hidden_size"] // heads}
    if model_type in QK_NORM_TYPES or (model_type == "glm4_moe" and cfg.get("use_qk_norm")):
        attention["qk_norm"] = True
    return attention


def _layout(cfg, layers, notes):
    """(dense_layers, moe_every): leading dense layers, then a MoE layer every moe_every-th layer."""
    dense = cfg.get("first_k_dense_replace") or 0
    only = sorted(cfg.get("mlp_only_layers") or [])
    if only:
        if only == list(range(len(only))):
            dense = max(dense, len(only))
        else:
            notes.append(f"mlp_only_layers {only} are not a leading run: simulated as MoE layers")
    every = _first(cfg, "decoder_sparse_step", "interleave_moe_layer_step") or 1
    if every > 1 and layers % every:
        notes.append(f"MoE every {every} layers does not divide {layers} layers")
    return dense, every


def _full_every(windowed, layers):
    """N where exactly the layers i with (i + 1) % N == 0 attend in full (0: none does), else None."""
    full = [i for i in range(layers) if not windowed[i]]
    if not full:
        return 0
    every = full[0] + 1
    return every if every > 1 and full == list(range(every - 1, layers, every)) else None


def _window(cfg, model_type, layers, notes):
    """moesim's attention.window from layer_types / sliding_window / attention_chunk_size, or None."""
    kinds = cfg.get("layer_types") or []
    if model_type.startswith("llama4") and cfg.get("attention_chunk_size") and not kinds:
        rope = cfg.get("no_rope_layers")  # 1: a RoPE layer, which attends in chunks; 0: NoPE, full
        if not rope:
            interval = cfg.get("no_rope_layer_interval") or 4
            rope = [int((i + 1) % interval != 0) for i in range(layers)]
        kinds = ["chunked_attention" if r else "full_attention" for r in rope]
    if not kinds and cfg.get("sliding_window") and cfg.get("use_sliding_window", True):
        kinds = ["sliding_attention"] * layers  # Mistral: every layer slides
    windowed = [k in ("sliding_attention", "chunked_attention") for k in kinds]
    kind = "chunked" if "chunked_attention" in kinds else "sliding"
    tokens = cfg.get("attention_chunk_size") if kind == "chunked" else cfg.get("sliding_window")
    every = _full_every(windowed, layers) if len(kinds) == layers else None
    if set(kinds) - {"full_attention", kind + "_attention"} or (any(windowed) and (not tokens or every is None)):
        notes.append(f"layer kinds {sorted(set(kinds))}: every layer simulated as full attention")
        return None
    if not any(windowed):
        return None
    window = {"kind": kind, "tokens": tokens}
    if every:
        window["full_every"] = every
    return window


def spec_from_config(config, name=None, file="config.json"):
    """The moesim spec (dict) of a transformers config (dict), and the notes on what it leaves out."""
    cfg = config.get("text_config") or config  # Llama-4 keeps its decoder in text_config
    model_type = cfg.get("model_type") or config.get("model_type") or "unknown"
    experts = _first(cfg, "num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
    top_k = _first(cfg, "num_experts_per_tok", "moe_topk", "moe_k")
    if not experts or not top_k:
        raise ConfigError(f"{file}: /num_experts: a MoE config has experts and experts per token "
                          f"(model_type {model_type})")
    layers = _need(cfg, "num_hidden_layers", file)
    hidden = _need(cfg, "hidden_size", file)
    notes = []
    expert_ffn = _first(cfg, "moe_intermediate_size") or _need(cfg, "intermediate_size", file)
    shared, shared_ffn, shared_gate = 0, 0, False
    if cfg.get("n_shared_experts"):
        shared, shared_ffn = cfg["n_shared_experts"], expert_ffn
    elif cfg.get("shared_expert_intermediate_size"):
        shared, shared_ffn = 1, cfg["shared_expert_intermediate_size"]
        shared_gate = model_type in ("qwen2_moe", "qwen3_next")  # their shared_expert_gate: sigmoid(x w^T) * out
    elif model_type.startswith("llama4"):
        shared, shared_ffn = 1, expert_ffn
    dense, every = _layout(cfg, layers, notes)
    dense_ffn = _first(cfg, "intermediate_size_mlp", "intermediate_size") or 0
    if dense == 0 and every == 1 and "moe_intermediate_size" not in cfg and "intermediate_size_mlp" not in cfg:
        dense_ffn = 0  # intermediate_size was the experts' width, and no layer is dense
    if cfg.get("attention_bias") or cfg.get("qkv_bias") or model_type == "qwen2_moe":
        notes.append("q/k/v projection biases are not in moesim's spec")
    attention = _attention(cfg, model_type, file)
    window = _window(cfg, model_type, layers, notes)
    if window:
        attention["window"] = window
    act = str(cfg.get("hidden_act") or "silu")
    spec = {"schema_version": 1,
            "name": name or os.path.basename(str(config.get("_name_or_path") or model_type)).lower() or model_type,
            "source": f"HF config.json (model_type {model_type}) by kernels/tools/hf_config_to_spec.py"
                      + (f"; not modeled: {'; '.join(notes)}" if notes else ""),
            "layers": layers, "dense_layers": dense}
    if every > 1:
        spec["moe_every"] = every
    spec.update(hidden=hidden, vocab=_need(cfg, "vocab_size", file), attention=attention,
                moe=dict({"experts": experts, "top_k": top_k, "expert_ffn": expert_ffn, "shared_experts": shared,
                          "shared_ffn": shared_ffn}, **({"shared_gate": True} if shared_gate else {})),
                dense_ffn=dense_ffn, activation="swiglu" if act in ("silu", "swish") else "gelu",
                norm="rmsnorm" if "rms_norm_eps" in cfg or "layer_norm_eps" not in cfg else "layernorm")
    return spec, notes


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="a transformers config.json")
    p.add_argument("--name", help="the spec's name (default: the config's _name_or_path, else its model_type)")
    p.add_argument("--out", help="write the spec here (default: stdout)")
    args = p.parse_args(argv)
    try:
        with open(args.config, encoding="utf-8") as f:
            try:
                config = json.load(f)
            except json.JSONDecodeError as e:
                raise ConfigError(f"{args.config}:{e.lineno}: invalid JSON: {e.msg}") from None
        if not isinstance(config, dict):
            raise ConfigError(f"{args.config}: expected a JSON object")
        spec, notes = spec_from_config(config, args.name, args.config)
    except (OSError, ValueError) as e:
        print(f"hf_config_to_spec: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"hf_config_to_spec: not modeled: {note}", file=sys.stderr)
    text = json.dumps(spec, indent=2) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
