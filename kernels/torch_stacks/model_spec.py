"""The part of a moesim model file (models/specs/NAME.json) that one MoE decoder layer needs."""
import json
import os
from dataclasses import dataclass


def spec_from_record_folder(spec_path, out_dir):
    """A record's config.model_spec: its model file's path from the record's folder, where moesim looks."""
    return os.path.relpath(os.path.abspath(spec_path), os.path.abspath(out_dir))


class SpecError(ValueError):
    """A model file the stacks cannot build; str() is one line 'file: /json/path: problem'."""


@dataclass(frozen=True)
class AttentionShape:
    kind: str  # "mha" | "gqa" | "mla"
    heads: int
    kv_heads: int
    head_dim: int  # MLA: the non-rotary query/key part per head (moesim's head_dim)
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0
    qk_norm: bool = False  # per-head RMSNorm of queries and keys before RoPE (Qwen3)

    @property
    def qk_head_dim(self):
        return self.head_dim + self.rope_head_dim if self.kind == "mla" else self.head_dim

    @property
    def value_head_dim(self):
        return self.v_head_dim if self.kind == "mla" else self.head_dim


@dataclass(frozen=True)
class LayerShape:
    name: str
    hidden: int
    attention: AttentionShape
    experts: int
    top_k: int
    expert_ffn: int
    shared_experts: int
    shared_ffn: int  # per shared expert
    shared_gate: bool = False  # the shared experts' output times sigmoid(x w^T), w [1, H] (Qwen2-MoE)

    @property
    def shared_width(self):
        """The shared experts run as one SwiGLU MLP of this width (moesim's SHARED_EXPERTS)."""
        return self.shared_experts * self.shared_ffn


def _field(obj, key, path, file, kind=int, minimum=None):
    if key not in obj:
        raise SpecError(f"{file}: {path}/{key}: missing (expected {kind.__name__})")
    value = obj[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SpecError(f"{file}: {path}/{key} = {json.dumps(value)}: expected an integer")
    if kind is str and not isinstance(value, str):
        raise SpecError(f"{file}: {path}/{key} = {json.dumps(value)}: expected a string")
    if kind is bool and not isinstance(value, bool):
        raise SpecError(f"{file}: {path}/{key} = {json.dumps(value)}: expected true or false")
    if minimum is not None and value < minimum:
        raise SpecError(f"{file}: {path}/{key} = {value}: must be >= {minimum}")
    return value


def parse_layer_shape(spec, file="<model>"):
    """Reads the layer shapes from a parsed model file; raises SpecError naming the JSON path."""
    if not isinstance(spec, dict):
        raise SpecError(f"{file}: /: expected a JSON object")
    for key in ("attention", "moe"):
        if not isinstance(spec.get(key), dict):
            raise SpecError(f"{file}: /{key}: expected an object")
    for key, allowed in (("activation", "swiglu"), ("norm", "rmsnorm")):
        value = _field(spec, key, "", file, str)
        if value != allowed:
            raise SpecError(f"{file}: /{key} = \"{value}\": the stacks build {allowed} only")
    a, m = spec["attention"], spec["moe"]
    kind = _field(a, "type", "/attention", file, str)
    if kind not in ("mha", "gqa", "mla"):
        raise SpecError(f"{file}: /attention/type = \"{kind}\": expected mha, gqa or mla")
    mla = kind == "mla"
    attention = AttentionShape(
        kind=kind,
        heads=_field(a, "heads", "/attention", file, minimum=1),
        kv_heads=_field(a, "kv_heads", "/attention", file, minimum=1),
        head_dim=_field(a, "head_dim", "/attention", file, minimum=1),
        kv_lora_rank=_field(a, "kv_lora_rank", "/attention", file, minimum=1) if mla else 0,
        q_lora_rank=_field(a, "q_lora_rank", "/attention", file, minimum=0) if mla else 0,
        rope_head_dim=_field(a, "rope_head_dim", "/attention", file, minimum=2) if mla else 0,
        v_head_dim=_field(a, "v_head_dim", "/attention", file, minimum=1) if mla else 0,
        qk_norm=_field(a, "qk_norm", "/attention", file, bool) if "qk_norm" in a else False,
    )
    if attention.heads % attention.kv_heads:
        raise SpecError(f"{file}: /attention/kv_heads = {attention.kv_heads}: must divide heads ({attention.heads})")
    shape = LayerShape(
        name=_field(spec, "name", "", file, str),
        hidden=_field(spec, "hidden", "", file, minimum=1),
        attention=attention,
        experts=_field(m, "experts", "/moe", file, minimum=1),
        top_k=_field(m, "top_k", "/moe", file, minimum=1),
        expert_ffn=_field(m, "expert_ffn", "/moe", file, minimum=1),
        shared_experts=_field(m, "shared_experts", "/moe", file, minimum=0),
        shared_ffn=_field(m, "shared_ffn", "/moe", file, minimum=0),
        shared_gate=_field(m, "shared_gate", "/moe", file, bool) if "shared_gate" in m else False,
    )
    if shape.top_k > shape.experts:
        raise SpecError(f"{file}: /moe/top_k = {shape.top_k}: must be <= experts ({shape.experts})")
    return shape


def load_layer_shape(path):
    """Reads models/specs/NAME.json; raises SpecError (bad JSON, missing or wrong fields)."""
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise SpecError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    return parse_layer_shape(spec, path)


def scaled(shape, divisor):
    """The same layer with every width divided by `divisor` (at least 8 wide), for CPU tests on tiny shapes."""
    if divisor == 1:
        return shape

    def shrink(v, floor=8):
        return max(floor, v // divisor) if v else 0

    a = shape.attention
    kv_heads = max(1, a.kv_heads // divisor)
    attention = AttentionShape(a.kind, kv_heads * (a.heads // a.kv_heads), kv_heads, shrink(a.head_dim),
                               shrink(a.kv_lora_rank), shrink(a.q_lora_rank), shrink(a.rope_head_dim, 2),
                               shrink(a.v_head_dim), a.qk_norm)
    return LayerShape(shape.name, shrink(shape.hidden), attention, shape.experts, shape.top_k,
                      shrink(shape.expert_ffn), shape.shared_experts, shrink(shape.shared_ffn), shape.shared_gate)
