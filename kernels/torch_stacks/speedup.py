"""The FarSkip speedup of a regular/farskip pair and how precisely its timed steps fix it (no torch needed).

Interleaved pair (run --interleave): timed round i runs one regular and one farskip step back to back, so
round i's two steps see the same state of the machine. The host's speed moves during a run, in steps that
both schedules share (2026-11-26, 2x H100: Qwen3 grouped EP 2, 4 layers, forward, both schedules at
18-21 ms for 20 rounds, then 12-13 ms for the next 20), so the speedup is the median over rounds of
regular_i / farskip_i, and its 95% interval a percentile bootstrap over rounds (each resample draws whole
rounds, keeping their two steps together).

Pair timed as separate configurations (the older records): no round pairs one step with another, so the
speedup is the ratio of the step medians (the records' p50s) and the bootstrap resamples each list on
its own.

Seeded, so a record's interval can be recomputed exactly (records check does).
"""
import random
import statistics

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 12345
METHOD = (f"median over rounds of regular/farskip; percentile bootstrap over rounds, {BOOTSTRAP_RESAMPLES} "
          f"resamples, seed {BOOTSTRAP_SEED}")


def ratio_of_medians(regular, farskip):
    return statistics.median(regular) / statistics.median(farskip)


def median_round_ratio(regular, farskip):
    if len(regular) != len(farskip):
        raise ValueError(f"{len(regular)} regular and {len(farskip)} farskip steps: rounds need one of each")
    return statistics.median(r / f for r, f in zip(regular, farskip))


def _percentile(sorted_values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _interval(draws, level):
    tail = (1 - level) / 2
    ordered = sorted(draws)
    return _percentile(ordered, tail), _percentile(ordered, 1 - tail)


def paired_interval(regular, farskip, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, level=0.95):
    """Bootstrap interval of median_round_ratio, resampling rounds: (low, high)."""
    rng = random.Random(seed)
    ratios = [r / f for r, f in zip(regular, farskip)]
    return _interval((statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(resamples)), level)


def independent_interval(regular, farskip, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, level=0.95):
    """Bootstrap interval of ratio_of_medians, each list resampled on its own: (low, high)."""
    rng = random.Random(seed)
    return _interval((ratio_of_medians(rng.choices(regular, k=len(regular)), rng.choices(farskip, k=len(farskip)))
                      for _ in range(resamples)), level)


def speedup_summary(regular, farskip):
    """What an interleaved pair's records store under timing.speedup (README: Record)."""
    low, high = paired_interval(regular, farskip)
    return {"farskip_over": "regular", "estimate": median_round_ratio(regular, farskip), "ci95": [low, high],
            "rounds": len(regular), "method": METHOD, "ratio_of_medians": ratio_of_medians(regular, farskip)}
