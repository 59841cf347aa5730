"""One configuration to measure, its name, and the named matrices of configurations a device call runs."""
from dataclasses import asdict, dataclass, replace

from .routing import parse_routing

NATIVE_STYLES = ("loop", "grouped")
HF_STYLES = ("hf-eager", "hf-grouped_mm")
PHASES = ("forward", "train")
DTYPES = ("bf16", "fp32")


@dataclass(frozen=True)
class RunConfig:
    model: str                 # moesim model name (models/specs/NAME.json)
    style: str                 # loop | grouped | hf-eager | hf-grouped_mm
    schedule: str = "regular"  # regular | farskip
    phase: str = "forward"     # forward | train
    tokens: int = 2048         # per rank
    seq: int = 2048
    layers: int = 2
    routing: str = "balanced"  # balanced | natural | zipf:S
    dtype: str = "bf16"
    seed: int = 1
    warmup: int = 3
    iters: int = 10
    trace_iters: int = 0       # Kineto trace of this many steps after timing (0: none)
    trace_all_ranks: bool = False
    scale: int = 1             # divide every width by this (CPU tests on tiny shapes)
    interleaved: bool = False  # timed step by step against its other schedule on one stack (run --interleave)
    # traced as a user's own profiler traces a model: no moesim ranges, the module hierarchy from the Python
    # tracer (with_stack) instead; transformers' models only (moesim's own stacks mark their ops in code)
    plain_trace: bool = False

    def validate(self):
        if self.style not in NATIVE_STYLES + HF_STYLES:
            raise ValueError(f"style '{self.style}': expected one of {', '.join(NATIVE_STYLES + HF_STYLES)}")
        if self.phase not in PHASES:
            raise ValueError(f"phase '{self.phase}': expected forward or train")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype '{self.dtype}': expected bf16 or fp32")
        if self.seq < 1 or self.tokens % self.seq:
            raise ValueError(f"seq {self.seq} must divide tokens {self.tokens}")
        if self.plain_trace and self.style not in HF_STYLES:
            raise ValueError(f"{self.style}: a plain trace is for transformers' models (hf-eager, hf-grouped_mm)")
        if self.style in HF_STYLES and self.schedule != "regular":
            raise ValueError(f"{self.style}: transformers' models run the regular schedule only")
        for name in ("layers", "iters", "scale"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")
        parse_routing(self.routing)
        return self

    def name(self, ep):
        routing = self.routing.replace(":", "")
        return (f"{self.model}.{self.style}.ep{ep}.t{self.tokens}.s{self.seq}.l{self.layers}.{self.phase}."
                f"{self.schedule}.{routing}")

    def as_dict(self):
        return asdict(self)


def _grid(models_tokens, styles, schedules, phases, seq=None, **common):
    return [RunConfig(model=m, style=st, schedule=sc, phase=ph, tokens=t, seq=seq or min(t, 4096), **common)
            for m, tokens in models_tokens for t in tokens for st in styles for ph in phases for sc in schedules]


def _with_traces(configs, wanted):
    """Marks the configs for which wanted(config) is 1 (rank 0) or 'all' (every rank) to be traced."""
    out = []
    for c in configs:
        w = wanted(c)
        out.append(replace(c, trace_iters=1, trace_all_ranks=(w == "all")) if w else c)
    return out


MODELS_TOKENS = (("qwen3-30b-a3b", (2048, 8192)), ("mixtral-8x7b", (2048, 8192)),
                 ("deepseek-v2-lite", (4096,)), ("llama4-scout", (4096,)))


def _by_priority(models_tokens):
    """Each model's first token count, then each model's second, ...: a deadline cuts the least needed."""
    rounds = max(len(tokens) for _, tokens in models_tokens)
    return [((m, (tokens[i],)),) for i in range(rounds) for m, tokens in models_tokens if i < len(tokens)]


def _device_native(ep):
    schedules = ("regular", "farskip") if ep > 1 else ("regular",)
    configs = [c for group in _by_priority(MODELS_TOKENS) for c in _grid(group, NATIVE_STYLES, schedules, PHASES)]
    # Layer count as a generalization axis: Qwen3 at 2048 tokens with 4 layers too.
    configs += _grid((("qwen3-30b-a3b", (2048,)),), NATIVE_STYLES, schedules, PHASES, layers=4)

    def traced(c):
        if c.layers != 2:
            return None
        if c.model == "qwen3-30b-a3b" and c.tokens == 2048 and (ep != 2 or c.phase == "train"):
            return "all" if (ep == 2 and c.style == "grouped" and c.schedule == "farskip") else 1
        if c.model == "mixtral-8x7b" and c.tokens == 8192 and c.style == "grouped" and c.phase == "train":
            return 1 if ep > 1 else None
        if c.model == "deepseek-v2-lite" and c.style == "grouped" and c.phase == "train":
            return 1 if (c.schedule == "farskip") == (ep > 1) else None
        return None

    return _with_traces(configs, traced)


def _device_hf():
    models = (("qwen3-30b-a3b", (2048, 8192)), ("mixtral-8x7b", (2048, 8192)), ("deepseek-v2-lite", (4096,)))
    configs = [c for group in _by_priority(models) for c in _grid(group, HF_STYLES, ("regular",), PHASES)]
    return _with_traces(configs, lambda c: 1 if c.model == "qwen3-30b-a3b" and c.tokens == 2048 else None)


def _cpu_smoke(ep):
    schedules = ("regular", "farskip")
    configs = _grid((("qwen3-30b-a3b", (64,)), ("deepseek-v2-lite", (64,))), NATIVE_STYLES, schedules, PHASES,
                    seq=32, scale=32, dtype="fp32", warmup=1, iters=2)
    return _with_traces(configs, lambda c: 1 if c.model == "qwen3-30b-a3b" and c.schedule == "farskip" else None)


def _device_ci(ep):
    """Tiny traced configs (widths / 8, 256 tokens) whose Kineto traces are small enough to commit as test data
    for the trace reader."""
    configs = _grid((("qwen3-30b-a3b", (256,)), ("deepseek-v2-lite", (256,))), NATIVE_STYLES,
                    ("farskip",) if ep > 1 else ("regular",), PHASES, seq=128, scale=8, warmup=2, iters=3)
    return _with_traces(configs, lambda c: 1)


MATRICES = {
    "device-ci": _device_ci,
    "device": _device_native,
    "device-hf": lambda ep: _device_hf(),
    "cpu-smoke": _cpu_smoke,
}


def interleave(configs):
    """The run's units: each regular/farskip pair of configurations equal but for the schedule becomes one
    (regular, farskip) unit, both marked interleaved, at the regular one's place; the rest stay alone."""
    def key(c):
        return replace(c, schedule="regular", trace_iters=0, trace_all_ranks=False)
    farskip = {key(c): c for c in configs if c.schedule == "farskip"}
    regular = {key(c) for c in configs if c.schedule == "regular"}
    units = []
    for c in configs:
        if c.schedule == "regular" and key(c) in farskip:
            units.append((replace(c, interleaved=True), replace(farskip[key(c)], interleaved=True)))
        elif not (c.schedule == "farskip" and key(c) in regular):
            units.append((c,))
    return units


def matrix(names, ep):
    """The configurations of one named matrix, or of several joined by commas, in order."""
    configs = []
    for name in names.split(","):
        if name not in MATRICES:
            raise ValueError(f"matrix '{name}': expected one of {', '.join(MATRICES)}")
        configs += [c.validate() for c in MATRICES[name](ep)]
    return configs
