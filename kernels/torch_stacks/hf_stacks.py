"""Hugging Face transformers' own MoE decoder stacks, as they ship, built from a config with random weights.

transformers 5.x selects the experts implementation per model: `experts_implementation=` of from_config
(or the model's `set_experts_implementation`) sets config._experts_implementation, which the experts class's
@use_experts_implementation wrapper reads on every call: "eager" runs the class's own loop over the experts
hit, "grouped_mm" (the default where torch has _grouped_mm) transformers.integrations.moe's
grouped_mm_experts_forward. Both are measured here, one GPU (transformers has no expert parallelism).

Balanced routing: a forward pre-hook on each experts module replaces the router's top-k expert ids with the
forced assignment (the router's kernels all run; the weights stay the router's for its own choice).
Profiler ranges "moesim.L<layer>.<op>" come from module hooks (torch_stacks.annotate): attn_norm, attention (the
whole attention; attn_qkv and attn_out inside it on the projections, qk_norm on Qwen3's per-head q/k norms),
mlp_norm, moe (the whole block), gate, routed_experts, shared_experts.
"""
import inspect

import torch

from .annotate import add_range, layer_parts
from .layers import TORCH_DTYPES
from .routing import forced_assignment, layer_seed, parse_routing

HF_EXPERTS = {"hf-eager": "eager", "hf-grouped_mm": "grouped_mm"}


def _hf_config(shape, layers, seq):
    """transformers' config for the moesim model `shape.name`: (model_type, kwargs)."""
    a = shape.attention
    common = dict(hidden_size=shape.hidden, num_hidden_layers=layers, num_attention_heads=a.heads,
                  num_key_value_heads=a.kv_heads, vocab_size=256, max_position_embeddings=seq,
                  num_experts_per_tok=shape.top_k)
    if shape.name.startswith("qwen3"):
        return "qwen3_moe", dict(common, head_dim=a.head_dim, num_experts=shape.experts,
                                 moe_intermediate_size=shape.expert_ffn, intermediate_size=shape.expert_ffn,
                                 decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True)
    if shape.name.startswith("mixtral"):
        return "mixtral", dict(common, head_dim=a.head_dim, num_local_experts=shape.experts,
                               intermediate_size=shape.expert_ffn, sliding_window=None)
    if shape.name.startswith("deepseek-v2"):
        return "deepseek_v2", dict(common, n_routed_experts=shape.experts, moe_intermediate_size=shape.expert_ffn,
                                   n_shared_experts=shape.shared_experts, intermediate_size=shape.expert_ffn,
                                   first_k_dense_replace=0, q_lora_rank=a.q_lora_rank or None,
                                   kv_lora_rank=a.kv_lora_rank, qk_nope_head_dim=a.head_dim,
                                   qk_rope_head_dim=a.rope_head_dim, v_head_dim=a.v_head_dim,
                                   head_dim=a.rope_head_dim, topk_method="greedy", n_group=1, topk_group=1)
    if shape.name.startswith("olmoe"):  # q/k norms over the whole projection come with the model
        return "olmoe", dict(common, num_experts=shape.experts, intermediate_size=shape.expert_ffn,
                             norm_topk_prob=False)
    if shape.name.startswith(("qwen1.5-moe", "qwen2-moe")):  # one shared expert behind a sigmoid gate
        if shape.shared_experts != 1:
            raise ValueError(f"{shape.name}: transformers' qwen2_moe has one shared expert, not "
                             f"{shape.shared_experts}")
        return "qwen2_moe", dict(common, num_experts=shape.experts, moe_intermediate_size=shape.expert_ffn,
                                 shared_expert_intermediate_size=shape.shared_ffn, intermediate_size=shape.shared_ffn,
                                 decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=False)
    raise ValueError(f"{shape.name}: no transformers model is mapped (qwen3*, mixtral*, deepseek-v2*, olmoe*, "
                     "qwen1.5-moe*/qwen2-moe*)")


def _build(model_type, kwargs, experts, dtype, device):
    from transformers import AutoConfig, AutoModel  # noqa: PLC0415 (optional: the device has it)

    config = AutoConfig.for_model(model_type, **kwargs)
    with torch.device(device):
        try:
            model = AutoModel.from_config(config, attn_implementation="sdpa", experts_implementation=experts,
                                          dtype=dtype)
        except TypeError:  # a transformers without the experts_implementation argument
            model = AutoModel.from_config(config, attn_implementation="sdpa", torch_dtype=dtype)
            model.config._experts_implementation = experts
    return model.to(device=device, dtype=dtype)


def _force_routing(experts_module, assignment):
    """Replaces the expert ids of transformers 5.x's experts call forward(hidden_states, top_k_index, weights)."""
    names = list(inspect.signature(experts_module.forward).parameters)
    if names[:2] != ["hidden_states", "top_k_index"]:
        raise ValueError(f"{type(experts_module).__name__}.forward{tuple(names)}: cannot force the routing of an "
                         "experts module without the (hidden_states, top_k_index, top_k_weights) signature")

    def replace_ids(mod, args, kwargs):
        if len(args) >= 2:
            return (args[0], assignment, *args[2:]), kwargs
        return args, dict(kwargs, top_k_index=assignment)
    experts_module.register_forward_pre_hook(replace_ids, with_kwargs=True)


def _instrument(layer, index, assignment, ranges=True):
    parts = layer_parts(layer)
    for op, module in parts.items() if ranges else ():
        for m in module if isinstance(module, list) else [module]:
            add_range(m, f"moesim.L{index}.{op}")
    if assignment is not None:
        if isinstance(parts["routed_experts"], list):
            raise ValueError(f"{type(layer).__name__}: experts as a ModuleList (transformers 4.x): forcing the routing "
                             "needs transformers 5's experts module")
        _force_routing(parts["routed_experts"], assignment)


def hf_builder(cfg, shape, ctx):
    if ctx.world != 1:
        raise ValueError(f"{cfg.style}: transformers' models run on one process (EP 1), not {ctx.world}")
    import transformers  # noqa: PLC0415

    model_type, kwargs = _hf_config(shape, cfg.layers, cfg.seq)
    experts = HF_EXPERTS[cfg.style]
    model = _build(model_type, kwargs, experts, TORCH_DTYPES[cfg.dtype], ctx.device)
    kind, exponent = parse_routing(cfg.routing)
    for i, layer in enumerate(model.layers):
        seed = layer_seed(cfg.seed, i, 0)
        a = forced_assignment(kind, exponent, cfg.tokens, shape.experts, shape.top_k, seed)
        _instrument(layer, i, a.to(ctx.device) if a is not None else None, ranges=not cfg.plain_trace)
    # The model's own ops before the first layer need no range (moesim reads them as model_inputs); the final
    # norm gets one so that the last layer's residual add, which runs just before it, stays the layer's.
    if not cfg.plain_trace:
        add_range(model.norm, f"moesim.L{len(model.layers) - 1}.final_norm")
    batch = cfg.tokens // cfg.seq

    def forward(x):
        return model(inputs_embeds=x.view(batch, cfg.seq, -1), use_cache=False).last_hidden_state.view(cfg.tokens, -1)

    info = {"implementation": "transformers", "transformers_model": type(model).__name__,
            "transformers_version": transformers.__version__,
            "experts_implementation": getattr(model.config, "_experts_implementation", None),
            "attn_implementation": getattr(model.config, "_attn_implementation", None)}
    return model, forward, info
