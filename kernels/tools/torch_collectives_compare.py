#!/usr/bin/env python3
"""Times NCCL all_reduce and all_to_all_single through torch.distributed, nccl-tests style.

Run with one process per GPU:
  python3 -m torch.distributed.run --standalone --nproc_per_node 4 kernels/tools/torch_collectives_compare.py \
      --json torch_collectives.json
Size S is nccl-tests' size: the all_reduce buffer, one rank's all_to_all send buffer (float32, equal splits).
Each iteration is timed with its own CUDA event pair after warm-up; a size's time is the slowest rank's
median, as collectives_bench reports it. algbw = S / time; busbw = algbw * 2(n-1)/n (all_reduce) or
algbw * (n-1)/n (all_to_all), as in nccl-tests doc/PERFORMANCE.md.
Output (rank 0): a '#'-commented table on stdout and, with --json, a JSON file created exclusively.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist

from exclusive_file import open_exclusive  # kernels/tools/, next to this script


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="64M,256M,1G")
    parser.add_argument("--ops", default="all_reduce,all_to_all")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, n = dist.get_rank(), dist.get_world_size()
    results = []
    if rank == 0:
        print(f"# torch_collectives_compare: torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{n} x {torch.cuda.get_device_name(0)}")
        print(f"# Command: {' '.join(sys.argv)}")
        print(f"# {'op':>10} {'size':>12} {'time':>10} {'min':>10} {'algbw':>8} {'busbw':>8}")
        print(f"# {'':>10} {'(B)':>12} {'(us)':>10} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8}")
    for op in args.ops.split(","):
        for size in (parse_size(s) for s in args.sizes.split(",")):
            count = size // 4
            send = torch.rand(count, device="cuda", dtype=torch.float32)
            recv = torch.empty_like(send)

            def step():
                if op == "all_reduce":
                    dist.all_reduce(send)
                else:
                    dist.all_to_all_single(recv, send)

            for _ in range(args.warmup):
                step()
            torch.cuda.synchronize()
            dist.barrier()
            samples = []
            for _ in range(args.iters):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                step()
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) * 1e3)
            mine = torch.tensor([statistics.median(samples), min(samples)], device="cuda", dtype=torch.float64)
            slowest = mine.clone()
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            p50_us, min_us = slowest.tolist()
            algbw = size / (p50_us * 1e-6) / 1e9
            busbw = algbw * (2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n)
            results.append({"op": op, "size_bytes": size, "ranks": n, "time_us": {"p50": p50_us, "min": min_us},
                            "algbw_GBps": algbw, "busbw_GBps": busbw})
            if rank == 0:
                print(f"  {op:>10} {size:>12} {p50_us:>10.1f} {min_us:>10.1f} {algbw:>8.1f} {busbw:>8.1f}")
            del send, recv
    if rank == 0 and args.json:
        handle, _ = open_exclusive(args.json)
        with handle:
            json.dump({"schema_version": 1, "tool": "moesim-kernels/torch_collectives_compare.py",
                       "args": sys.argv, "start_time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                       "gpu": torch.cuda.get_device_name(0), "ranks": n,
                       "environment": {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "CUDA_"))},
                       "results": results}, handle, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
