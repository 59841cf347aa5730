#!/usr/bin/env python3
"""Times gemm_bench's bf16 shapes through PyTorch (cuBLAS and cuBLASLt) and compares the rates.

  python3 kernels/tools/torch_gemm_compare.py gemm.json --json torch_gemm.json

For every bf16 case of a gemm_bench JSON result, Y[M,N] = X[M,K] W[N,K]^T (torch.nn.functional.linear,
the same TN layout) is timed with torch's two BLAS back ends (torch.backends.cuda.preferred_blas_library
'cublas' and 'cublaslt'), rotating among the same number of input sets as gemm_bench (`sets`) and, where
gemm_bench timed CUDA-graph replays of G iterations, timing graph replays of G iterations too. The
table gives gemm_bench's p50 rate, each torch rate, and ours / best: the issue's check is >= 0.95.
Output: a '#'-commented table on stdout and, with --json, a JSON file created exclusively.

For the `models` group (gemm_bench --groups models: every GEMM the simulator emits for a layer of every
shipped model, tools/model_gemm_shapes.json) each row lists the model GEMMs it stands for ("uses"), and the
script adds one summary line per model and per kind of GEMM (attention/MLA projections, router, routed
experts, shared experts, dense FFN). gemm_bench's rate is the faster of cuBLASLt's pick and cublasGemmEx
(its "blas"); the table shows which, and cublasGemmEx / cuBLASLt time ("ex/lt"). Run it in the same lease
as gemm_bench: the ratios are only as good as the two processes' clocks are alike.

Clocks on the lent GPUs are not locked, so one GEMM's rate moves by up to ~10% with the power and
thermal state the previous shapes left behind. run_calibration.sh's `gemm_check` suite therefore
alternates rounds (gemm_bench, then this script) and compares best-of-rounds on both sides:

  python3 kernels/tools/torch_gemm_compare.py --combine torch_gemm_r1.json torch_gemm_r2.json ...

reads the JSON of each round (which holds our rate of that round next to torch's) and prints the table
of max-over-rounds rates. The combined JSON has the same rows plus the per-round rates.
"""
import argparse
import datetime
import json
import statistics
import sys

from exclusive_file import open_exclusive  # kernels/tools/, next to this script

try:
    import torch
except ImportError:  # --combine needs no GPU and no torch
    torch = None


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


def print_header(source):
    print(f"# {'name':>18} {'M':>6} {'N':>6} {'K':>6} {'ours':>8} {'blas':>6} {'ex/lt':>6} {'cublas':>8} "
          f"{'cublaslt':>8} {'ours/best':>9}")
    print(f"# {'':>18} {'':>6} {'':>6} {'':>6} {'(TF/s)':>8} {'':>6} {'':>6} {'(TF/s)':>8} {'(TF/s)':>8} {'':>9}")


def blas_of(case):
    """gemm_bench's winner ("lt", "ex"; "-" before the cublasGemmEx candidate) and cublasGemmEx / cuBLASLt time."""
    times = case.get("candidates_us") or {}
    lt, ex = times.get("cublaslt"), times.get("cublas_gemm_ex")
    winner = {"cublasLt": "lt", "cublasGemmEx": "ex"}.get(case.get("blas"), "-")
    return winner, (ex / lt if lt and ex else None)


def print_row(r):
    ratio = f"{r['ex_over_lt']:>6.3f}" if r.get("ex_over_lt") else f"{'-':>6}"
    print(f"  {r['name']:>18} {r['m']:>6} {r['n']:>6} {r['k']:>6} {r['ours_tflops']:>8.1f} {r.get('blas', '-'):>6} "
          f"{ratio} {r['torch_tflops']['cublas']:>8.1f} {r['torch_tflops']['cublaslt']:>8.1f} "
          f"{r['ours_over_best']:>9.3f}")


def summary_line(label, ratios):
    worse = sum(1 for x in ratios if x < 0.95)
    return (f"# {label:>28}: {len(ratios):>3} GEMMs, ours/best geomean {statistics.geometric_mean(ratios):.3f}, "
            f"min {min(ratios):.3f}, {worse} below 0.95")


KINDS = {"attn_qkv": "attention", "attn_out": "attention", "gate": "router", "routed_experts": "routed experts",
         "shared_experts": "shared experts", "dense_ffn": "dense FFN"}


def print_model_summaries(rows):
    """One line per model and per kind of GEMM, for rows that carry gemm_bench's "uses" (the models group)."""
    by_model, by_kind = {}, {}
    for r in rows:
        for use in r.get("uses", []):
            model, op = use.split("/", 1)
            by_model.setdefault(model, []).append(r["ours_over_best"])
            by_kind.setdefault(KINDS.get(op.split(".", 1)[0], op), []).append(r["ours_over_best"])
    for label, groups in (("model", by_model), ("kind", by_kind)):
        for name in sorted(groups):
            print(summary_line(f"{label} {name}", groups[name]))


def print_verdict(rows):
    worse = [r for r in rows if r["ours_over_best"] < 0.95]
    geo = statistics.geometric_mean([r["ours_over_best"] for r in rows]) if rows else float("nan")
    print_model_summaries(rows)
    print(f"# {len(rows)} shapes, geometric mean ours/best {geo:.3f}, {len(worse)} below 0.95: "
          f"{'PASS' if not worse else 'FAIL'}")


def write_json(path, payload):
    handle, _ = open_exclusive(path)
    with handle:
        json.dump(payload, handle, indent=1)


def combine(paths, out_json):
    """Best-of-rounds table from the JSON of several alternating rounds."""
    rounds = []
    for path in paths:
        with open(path) as f:
            rounds.append(json.load(f))
    keyed = {}
    for index, rnd in enumerate(rounds):
        for r in rnd["results"]:
            key = (r["name"], r["m"], r["n"], r["k"])
            entry = keyed.setdefault(key, {"name": r["name"], "m": r["m"], "n": r["n"], "k": r["k"],
                                           "uses": r.get("uses", []), "rounds": []})
            entry["rounds"].append({"round": index + 1, "ours_tflops": r["ours_tflops"],
                                    "torch_tflops": r["torch_tflops"]})
    rows = []
    for entry in keyed.values():
        if len(entry["rounds"]) != len(rounds):
            sys.exit(f"torch_gemm_compare: shape {entry['name']} {entry['m']}x{entry['n']}x{entry['k']} is "
                     f"missing from some of {paths}: every round must time the same shapes")
        entry["ours_tflops"] = max(x["ours_tflops"] for x in entry["rounds"])
        entry["torch_tflops"] = {b: max(x["torch_tflops"][b] for x in entry["rounds"]) for b in ("cublas", "cublaslt")}
        entry["ours_over_best"] = entry["ours_tflops"] / max(entry["torch_tflops"].values())
        rows.append(entry)
    print(f"# torch_gemm_compare --combine: best of {len(rounds)} alternating rounds ({', '.join(paths)}); "
          f"GPU {rounds[0].get('gpu', '?')}, torch {rounds[0].get('torch', '?')}")
    print_header(None)
    for r in rows:
        print_row(r)
    print_verdict(rows)
    if out_json:
        write_json(out_json, {"schema_version": 1, "tool": "moesim-kernels/torch_gemm_compare.py", "args": sys.argv,
                              "mode": "combine", "rounds": paths, "gpu": rounds[0].get("gpu"),
                              "torch": rounds[0].get("torch"), "cuda": rounds[0].get("cuda"), "results": rows})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gemm_json", nargs="?")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", default="")
    parser.add_argument("--combine", nargs="+", metavar="ROUND_JSON",
                        help="print the best-of-rounds table of earlier runs' --json files (no GPU needed)")
    args = parser.parse_args()
    if args.combine:
        combine(args.combine, args.json)
        return
    if not args.gemm_json:
        parser.error("give gemm_bench's JSON result, or --combine ROUND_JSON...")
    if torch is None:
        sys.exit("torch_gemm_compare: PyTorch is not installed (only --combine works without it)")
    with open(args.gemm_json) as f:
        ours = json.load(f)
    cases = [r for r in ours["results"] if r.get("in_dtype") == "bf16"]
    print(f"# torch_gemm_compare: torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"GPU {torch.cuda.get_device_name(0)}; ours = {args.gemm_json}")
    print_header(args.gemm_json)
    rows = []
    torch.manual_seed(1234)
    for case in cases:
        flops = 2.0 * case["m"] * case["n"] * case["k"]
        rates = {b: flops / time_us(case, b, args.warmup, args.iters) / 1e6 for b in ("cublas", "cublaslt")}
        best = max(rates.values())
        ratio = case["rate_tflops"] / best
        blas, ex_over_lt = blas_of(case)
        rows.append({"name": case["name"], "m": case["m"], "n": case["n"], "k": case["k"],
                     "uses": case.get("uses", []), "blas": blas, "ex_over_lt": ex_over_lt,
                     "ours_tflops": case["rate_tflops"], "torch_tflops": rates, "ours_over_best": ratio})
        print_row(rows[-1])
    print_verdict(rows)
    if args.json:
        write_json(args.json, {"schema_version": 1, "tool": "moesim-kernels/torch_gemm_compare.py", "args": sys.argv,
                               "start_time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                               "torch": torch.__version__, "cuda": torch.version.cuda,
                               "gpu": torch.cuda.get_device_name(0), "results": rows})


if __name__ == "__main__":
    main()
