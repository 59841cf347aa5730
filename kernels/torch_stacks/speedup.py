"""The FarSkip speedup of a regular/farskip pair and how precisely its timed steps fix it (no torch needed).

speedup = median(regular steps) / median(farskip steps), the ratio of the records' step p50s, so it is the
figure moesim's validation compares against. Its 95% interval is a percentile bootstrap: both step lists
resampled with replacement (each on its own: the steps of one schedule are exchangeable, and an
interleaved run's neighbours are not paired samples of one state), the ratio of medians recomputed each
time, the 2.5th and 97.5th percentiles of those ratios. Seeded, so a record's interval can be recomputed.
"""
import random
import statistics

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 12345


def ratio_of_medians(regular, farskip):
    return statistics.median(regular) / statistics.median(farskip)


def _percentile(sorted_values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_interval(regular, farskip, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, level=0.95):
    """The percentile-bootstrap interval of ratio_of_medians(regular, farskip): (low, high)."""
    rng = random.Random(seed)
    ratios = sorted(ratio_of_medians(rng.choices(regular, k=len(regular)), rng.choices(farskip, k=len(farskip)))
                    for _ in range(resamples))
    tail = (1 - level) / 2
    return _percentile(ratios, tail), _percentile(ratios, 1 - tail)


def speedup_summary(regular, farskip):
    """What an interleaved record stores under timing.speedup (README: Record)."""
    low, high = bootstrap_interval(regular, farskip)
    return {"farskip_over": "regular", "estimate": ratio_of_medians(regular, farskip), "ci95": [low, high],
            "method": f"ratio of step medians; percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples, "
                      f"seed {BOOTSTRAP_SEED}", "steps": [len(regular), len(farskip)]}
