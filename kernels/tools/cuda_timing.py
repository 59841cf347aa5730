"""CUDA-event timing shared by the PyTorch microbenchmarks of kernels/tools."""
import torch


def per_call_us(fn, warmup, repeats, calls=10, hold_ms=0.0):
    """GPU microseconds per call, one sample per repeat: `calls` back-to-back calls between two CUDA events.

    Without a hold the host's issue time before the first call is the only gap, shared by all calls, as long as
    the host queues them faster than the GPU runs them. With hold_ms a sleep kernel first holds the stream until
    the host has queued every call, so the issue time stays out even for calls shorter than their own issue
    (SDPA's dispatch, autograd's backward)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if hold_ms > 0:
            torch.cuda._sleep(int(hold_ms * 1e-3 * 2e9))  # cycles at ~2 GHz: a hold, not a measurement
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / calls)
    return samples
