#!/usr/bin/env python3
"""Host cost of an op whose launch runs much library code (an all-to-all, a GEMM, SDPA, a grouped GEMM) inside a
step, against the same op in a warm loop, as torch_host_costs.py times it.

torch_step_context.py finds that an eager op costs the host more when many different ops run between its calls
(the interpreter's, the dispatcher's and the library's code and branch history are no longer in the core's
caches): 1.43x for elementwise ops. Ops that run more host code before their kernel starts (c10d's work object
and NCCL's enqueue; cuBLAS's heuristics; SDPA's backend selection) may lose more. N processes, one per GPU (NCCL
for the all-to-all), time per round and probe:
  - warm: `--calls` calls of the probe back to back (the all-to-all: all_to_all_single(async_op=True) with split
    lists, then work.wait());
  - chain: every op of torch_step_context's pool once (autograd recording on, as a training forward), `--reps`
    times, shared by the probes;
  - chain + probe: the same, each chain followed by one call of the probe;
host issue time only (perf_counter; the device is synchronised outside the timed part). A probe's cost in a
step's context is (chain + probe - chain) / reps; rounds alternate the order of the cases, and all ranks start
each case at a barrier. The record gives per rank and as the mean over ranks the median and minimum over rounds,
and per probe the ratio in context / warm that cost/implementations/make_builtins.py applies to its warm cost.
The probes run at a layer's shape (torch_host_costs' sized cases: --rows x --width, 16 heads of 128 at 2048);
the expert-parallel path's host steps are probes too: Megatron's sort_chunks_by_idxs at 8 and 128 chunks of the
rows (the slope is a chunk's cost in context) and a list of --experts counts to the device (torch.tensor).

    python3 kernels/tools/torch_op_context.py --processes 2 --out op-context.json
"""
import argparse
import json
import statistics
import time

import torch
import torch.distributed as dist

from torch_dispatch_bench import record_header
from torch_host_costs import CHUNK_COUNTS, run_ranks, sized_op_cases, sort_chunks, start_rank
from torch_step_context import op_pool, run_chain


def timed(fn, sync, barrier):
    sync()
    barrier.wait()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    sync()
    return elapsed * 1e6


def probes(device, args, world):
    """name -> one call of the probe."""
    cuda = device.type == "cuda"
    dtype = torch.bfloat16 if cuda else torch.float32
    out = {name: fn for name, (fn, _) in sized_op_cases(device, args.rows, args.width, dtype).items()}
    send = torch.randn(args.rows, args.width, device=device, dtype=dtype)
    recv = torch.empty_like(send)
    splits = [args.rows // world] * world
    out["all_to_all"] = lambda: dist.all_to_all_single(recv, send, splits, splits, async_op=True).wait()
    rows = torch.randn(args.rows, args.width, device=device, dtype=dtype, requires_grad=True)
    for count in CHUNK_COUNTS:
        out[f"sort_chunks_{count}"] = lambda count=count: sort_chunks(rows, count)
    per_expert = list(range(args.experts))
    out["list_to_device"] = lambda: torch.tensor(per_expert, device=device)
    return out


def measure(rank, world, args, barrier, queue):
    device, sync = start_rank(rank, world, args.device, args.port)
    torch.manual_seed(rank)
    chain = [fn for _, fn in op_pool(device, 8, 16, torch.float32)]
    leaf = torch.randn(8, 16, device=device, requires_grad=True)
    calls = probes(device, args, world)

    def chain_only():
        for _ in range(args.reps):
            run_chain(chain, leaf)

    cases = {"chain": chain_only}
    for name, probe in calls.items():
        cases[name + ":warm"] = lambda probe=probe: [probe() for _ in range(args.calls)]

        def in_chain(probe=probe):
            for _ in range(args.reps):
                run_chain(chain, leaf)
                probe()
        cases[name + ":chain"] = in_chain
    for fn in cases.values():  # warm-up: every op, library handle and the communicator set up once
        for _ in range(3):
            timed(fn, sync, barrier)
    samples = {name: [] for name in cases}
    for round_ in range(args.rounds):
        names = list(cases) if round_ % 2 == 0 else list(reversed(list(cases)))
        for name in names:
            samples[name].append(timed(cases[name], sync, barrier))
    stats = lambda v: {"p50": statistics.median(v), "min": min(v)}  # noqa: E731
    result = {"chain_per_op": stats([c / (args.reps * len(chain)) for c in samples["chain"]])}
    for name in calls:
        result[name] = {
            "warm": stats([s / args.calls for s in samples[name + ":warm"]]),
            "in_context": stats([(a - c) / args.reps for a, c in zip(samples[name + ":chain"], samples["chain"])]),
        }
    dist.destroy_process_group()
    queue.put((rank, result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--calls", type=int, default=20, help="probe calls per warm sample")
    parser.add_argument("--reps", type=int, default=5, help="chains per context sample")
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--experts", type=int, default=32, help="list length of the list_to_device probe")
    parser.add_argument("--port", type=int, default=29731)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    world = args.processes
    ranks = run_ranks(measure, world, args)

    def mean(path):
        node = list(ranks)
        for key in path:
            node = [n[key] for n in node]
        return {s: statistics.mean(n[s] for n in node) for s in ("p50", "min")}

    summary = {"chain_per_op": mean(["chain_per_op"])}
    for name in ranks[0]:
        if name == "chain_per_op":
            continue
        warm, in_context = mean([name, "warm"]), mean([name, "in_context"])
        summary[name] = {"warm": warm, "in_context": in_context, "in_context_over_warm": in_context["p50"] / warm["p50"]}
        print(f"{name:12s} warm {warm['p50']:8.2f} us, in a step's context {in_context['p50']:8.2f} us: "
              f"{summary[name]['in_context_over_warm']:.3f}x (mean over {world} ranks of the medians)")
    print(f"chain op     {summary['chain_per_op']['p50']:8.2f} us")
    record = record_header("moesim-torch-op-context", device=args.device,
                           gpu=torch.cuda.get_device_name() if args.device == "cuda" else None, processes=world,
                           rounds=args.rounds, calls=args.calls, reps=args.reps, rows=args.rows, width=args.width,
                           ranks=ranks, mean_over_ranks=summary)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
