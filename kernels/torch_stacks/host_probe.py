"""How fast this process issues eager ops now: a fixed chain of 16 distinct tiny elementwise ops (autograd
recording, as a training forward), timed on the host, microseconds per op.

Host-bound stacks run as fast as their process issues ops, and that speed moves between machines of one kind
and between processes on one host (data/calibration/2026-11-27-nvidia-h200-x4-ep-path). timing.time_steps runs
the probe after every timed step, outside the step's timing, so a record says how fast its own process issued
ops while it ran. Run alone it prints this host's probe, to compare with a record's (`host_probe_us`):

    python3 -m torch_stacks.host_probe [--device cuda] [--samples 30]

A profile learned from a record's trace ran on a host whose probe the record gives; that probe over this host's is
the `--host-speed` to simulate this host with. The probe moves up to 1.6x between processes on one host
(data/calibration/2026-11-27-nvidia-h200-cuda-dispatch), so take it from the processes that will run the stack.
"""
import argparse
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    parser.add_argument("--samples", type=int, default=30, help="probe calls (each the median of 20 chains)")
    args = parser.parse_args()
    probe = make_probe(torch.device(args.device))
    values = sorted(probe() for _ in range(args.samples))
    print(f"host probe on {args.device}: {statistics.median(values):.2f} us per op (median of {args.samples}; "
          f"range {values[0]:.2f}-{values[-1]:.2f})")


if __name__ == "__main__":
    main()
