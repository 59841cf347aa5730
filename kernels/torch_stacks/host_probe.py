"""How fast this process issues eager ops now: a fixed chain of 16 distinct tiny elementwise ops (autograd
recording, as a training forward), timed on the host, microseconds per op.

Host-bound stacks run as fast as their process issues ops, and that speed moves between machines of one kind
and between processes on one host (data/calibration/2026-11-27-nvidia-h200-x4-ep-path). timing.time_steps runs
the probe after every timed step, outside the step's timing, so a record says how fast its own process issued
ops while it ran: the ratio of a reference host's probe to this one is the `--host-speed` to simulate it with.
"""
import statistics
import time

import torch

OPS = (torch.neg, torch.exp, torch.sigmoid, torch.tanh, torch.abs, torch.square, torch.sin, torch.cos, torch.relu,
       torch.erf, torch.expm1, torch.atan, lambda x: x * 0.5, lambda x: x + 1.0, lambda x: x.softmax(-1),
       lambda x: x.cumsum(-1))


def make_probe(device, chains=20):
    """A call returning the median over `chains` runs of the chain of its host microseconds per op."""
    x = torch.randn(8, 16, device=device, requires_grad=True)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def probe():
        sync()
        samples = []
        for _ in range(chains):
            start = time.perf_counter()
            y = x
            for op in OPS:
                y = op(y)
            samples.append((time.perf_counter() - start) * 1e6 / len(OPS))
        sync()
        return statistics.median(samples)
    probe()  # first calls load kernels and set up autograd nodes
    return probe
