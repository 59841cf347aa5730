"""Which experts each token goes to: the router's own choice, or an assignment forced onto it.

Forced assignments are drawn once per (layer, rank) from a seed, outside the timed region, so a step's
kernels are the router's own (gate GEMM, softmax, top-k) and only its choice is replaced.
"""
import torch


def parse_routing(text):
    """'balanced', 'natural' or 'zipf:S' (S > 0) -> (kind, exponent); raises ValueError otherwise."""
    if text in ("balanced", "natural"):
        return text, 0.0
    if text.startswith("zipf:"):
        try:
            exponent = float(text[5:])
        except ValueError:
            exponent = -1.0
        if exponent > 0:
            return "zipf", exponent
    raise ValueError(f"routing '{text}': expected balanced, natural or zipf:S with S > 0")


def layer_seed(seed, layer, rank):
    """The forced assignment's seed of one layer on one rank; seed // 1000 does not depend on the rank, so
    zipf's popular experts are the same on every rank (zipf_assignment)."""
    return ((seed * 100 + layer) * 1000) + rank


def _generator(seed):
    return torch.Generator().manual_seed(seed)


def balanced_assignment(tokens, experts, top_k, seed):
    """[tokens, top_k] expert ids: distinct per token, every expert gets tokens*top_k/experts rows (+-1).

    Slot s = t*top_k + j goes to expert (s + offset) % experts, so a token's top_k slots are consecutive
    experts (distinct when top_k <= experts); a seeded shuffle of the tokens keeps the rows of one expert
    from being neighbours in memory.
    """
    g = _generator(seed)
    offset = int(torch.randint(experts, (1,), generator=g))
    slots = torch.arange(tokens * top_k).view(tokens, top_k)
    assignment = (slots + offset) % experts
    return assignment[torch.randperm(tokens, generator=g)]


def zipf_assignment(tokens, experts, top_k, exponent, seed):
    """[tokens, top_k] distinct expert ids drawn with P(expert of popularity rank r) ~ 1/r^exponent.

    Which expert is the most popular is drawn from seed // 1000 (the same on every rank of a run, as a
    hot expert is in a real model); the tokens' draws use the full seed.
    """
    ranking = torch.randperm(experts, generator=_generator(seed // 1000))
    weights = torch.empty(experts)
    weights[ranking] = 1.0 / torch.arange(1, experts + 1, dtype=torch.float64).pow(exponent).float()
    return torch.multinomial(weights.expand(tokens, experts), top_k, replacement=False, generator=_generator(seed))


def forced_assignment(kind, exponent, tokens, experts, top_k, seed):
    """The assignment for `kind` ('balanced' or 'zipf'), or None for 'natural' (the router decides)."""
    if kind == "balanced":
        return balanced_assignment(tokens, experts, top_k, seed)
    if kind == "zipf":
        return zipf_assignment(tokens, experts, top_k, exponent, seed)
    return None
