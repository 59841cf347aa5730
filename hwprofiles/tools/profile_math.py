"""Shared constants and arithmetic of the published-profile generator (see make_published_profiles.py)."""
import math

KIB, MIB, GIB = 1024, 1024**2, 1024**3

# GEMM efficiency grid (rows m, columns min(n, k)).
GEMM_M = [16, 64, 256, 1024, 4096, 16384]
GEMM_MIN_NK = [512, 1024, 2048, 4096, 8192]
# Fraction of the best-shape efficiency a GEMM whose smaller of n, k is this size reaches (E):
# short K loops and small outputs amortise prologue/epilogue worse.
SIZE_FRACTION = {512: 0.55, 1024: 0.75, 2048: 0.9, 4096: 0.97, 8192: 1.0}
TILE = 128  # output tile edge assumed for the wave-fill term (E)

ATTENTION_SEQ = [512, 1024, 2048, 4096, 8192, 16384]
# FlashAttention-3, H100 SXM5, head dim 128, forward, non-causal [X1] (TF/s).
FA3_H100_TFLOPS = [467, 565, 625, 638, 646, 648]
# FlashAttention-2 on the same chart [X1]: its sequence-length shape is used for Ampere.
FA2_H100_TFLOPS = [309, 350, 362, 368, 370, 370]

MEMORY_BYTES = [64 * KIB, 1 * MIB, 16 * MIB, 256 * MIB, 4 * GIB]
MEMORY_RAMP = [0.15, 0.45, 0.8, 1.0, 1.0]  # (E) share of the large-copy efficiency

COLLECTIVE_BYTES = [64 * KIB, 1 * MIB, 16 * MIB, 256 * MIB, 4 * GIB]
COLLECTIVE_RAMP = [0.3, 0.7, 0.9, 1.0, 1.0]  # (E) latency-free busbw vs the large-message value


def sig(x, digits=4):
    """Rounds to `digits` significant digits so derived numbers read like figures, not floats."""
    if x == 0:
        return 0
    value = round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return int(value) if value == int(value) and abs(value) >= 1 else value


def pnorm3(a, b):
    """Smooth minimum of two efficiency ceilings (compute-shape cap, memory roofline)."""
    return (a**-3 + b**-3) ** (-1.0 / 3.0)


def steps(kind, n):
    """Latency steps of the engine's model: 2(n-1) ring all-reduce, n-1 all-gather/reduce-scatter, 1 all-to-all."""
    return {"all_reduce": 2 * (n - 1), "all_gather": n - 1, "reduce_scatter": n - 1, "all_to_all": 1}[kind]


def bus_factor(kind, n):
    """nccl-tests busbw / algbw."""
    return 2 * (n - 1) / n if kind == "all_reduce" else (n - 1) / n


def ramped_points(large_GBps, sizes=COLLECTIVE_BYTES, ramp=COLLECTIVE_RAMP):
    return [{"bytes": b, "GBps": sig(large_GBps * r)} for b, r in zip(sizes, ramp)]


def latency_corrected(kind, n, size, measured_GBps, alpha_us):
    """nccl-tests busbw includes the latency: remove alpha from the measured time, keep the bus bytes."""
    bus = size * bus_factor(kind, n)
    t = bus / (measured_GBps * 1e9)
    return bus / (t - alpha_us * 1e-6) / 1e9


def measured_points(kind, n_measured, alpha_us, large_GBps, measured, scale=1.0):
    """Ramp below 16 MiB (E), then measured (size, busbw) points with the latency taken out, times `scale`."""
    points = [{"bytes": b, "GBps": sig(scale * large_GBps * r)} for b, r in zip(COLLECTIVE_BYTES[:3], COLLECTIVE_RAMP[:3])]
    for size, gbps in measured:
        points.append({"bytes": size, "GBps": sig(scale * latency_corrected(kind, n_measured, size, gbps, alpha_us))})
    return points
