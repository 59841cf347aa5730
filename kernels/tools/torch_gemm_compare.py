#!/usr/bin/env python3
"""Times gemm_bench's bf16 shapes through PyTorch (cuBLAS and cuBLASLt) and compares the rates.

  python3 kernels/tools/torch_gemm_compare.py gemm.json --json torch_gemm.json

For every bf16 case of a gemm_bench JSON result, Y[M,N] = X[M,K] W[N,K]^T (torch.nn.functional.linear,
the same TN layout) is timed with torch's two BLAS back ends (torch.backends.cuda.preferred_blas_library
'cublas' and 'cublaslt'), rotating among the same number of input sets as gemm_bench (`sets`) and, where
gemm_bench timed CUDA-graph replays of G iterations, timing graph replays of G iterations too. The
table gives gemm_bench's p50 rate, each torch rate, and ours / best: the issue's check is >= 0.95.
Output: a '#'-commented table on stdout and, with --json, a JSON file created exclusively.
"""
import argparse
import datetime
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def open_exclusive(path):
    for suffix in range(10000):
        candidate = path if suffix == 0 else f"{path}.{suffix}"
        try:
            return open(candidate, "x"), candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"no free name for {path}")


def time_us(case, backend, warmup, iters):
    torch.backends.cuda.preferred_blas_library(backend)
    m, n, k = case["m"], case["n"], case["k"]
    sets = max(1, int(case.get("sets", 1)))
    xs = [torch.rand((m, k), device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
    ws = [torch.rand((n, k), device="cuda", dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
    ys = [torch.empty((m, n), device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    per_sample = max(1, int(case.get("graph_iters_per_sample", 0)))
    counter = [0]

    def one():
        i = counter[0] % sets
        counter[0] += 1
        torch.matmul(xs[i], ws[i].t(), out=ys[i])

    for _ in range(warmup):
        one()
    torch.cuda.synchronize()
    run = one
    if per_sample > 1:
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                one()
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(per_sample):
                    one()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        run = graph.replay
        for _ in range(warmup):
            run()
    samples = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / per_sample)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gemm_json")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    with open(args.gemm_json) as f:
        ours = json.load(f)
    cases = [r for r in ours["results"] if r.get("in_dtype") == "bf16"]
    print(f"# torch_gemm_compare: torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"GPU {torch.cuda.get_device_name(0)}; ours = {args.gemm_json}")
    print(f"# {'name':>18} {'M':>6} {'N':>6} {'K':>6} {'ours':>8} {'cublas':>8} {'cublaslt':>8} {'ours/best':>9}")
    print(f"# {'':>18} {'':>6} {'':>6} {'':>6} {'(TF/s)':>8} {'(TF/s)':>8} {'(TF/s)':>8} {'':>9}")
    rows = []
    torch.manual_seed(1234)
    for case in cases:
        flops = 2.0 * case["m"] * case["n"] * case["k"]
        rates = {b: flops / time_us(case, b, args.warmup, args.iters) / 1e6 for b in ("cublas", "cublaslt")}
        best = max(rates.values())
        ratio = case["rate_tflops"] / best
        rows.append({"name": case["name"], "m": case["m"], "n": case["n"], "k": case["k"],
                     "ours_tflops": case["rate_tflops"], "torch_tflops": rates, "ours_over_best": ratio})
        print(f"  {case['name']:>18} {case['m']:>6} {case['n']:>6} {case['k']:>6} {case['rate_tflops']:>8.1f} "
              f"{rates['cublas']:>8.1f} {rates['cublaslt']:>8.1f} {ratio:>9.3f}")
    worse = [r for r in rows if r["ours_over_best"] < 0.95]
    geo = statistics.geometric_mean([r["ours_over_best"] for r in rows]) if rows else float("nan")
    print(f"# {len(rows)} shapes, geometric mean ours/best {geo:.3f}, {len(worse)} below 0.95: "
          f"{'PASS' if not worse else 'FAIL'}")
    if args.json:
        handle, _ = open_exclusive(args.json)
        with handle:
            json.dump({"schema_version": 1, "tool": "moesim-kernels/torch_gemm_compare.py", "args": sys.argv,
                       "start_time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "gpu": torch.cuda.get_device_name(0), "results": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
