#!/usr/bin/env python3
"""Writes the shipped implementation profiles eager.json, grouped.json, hf-eager.json and hf-grouped_mm.json
(cost/IMPL_FORMAT.md).

They describe eager PyTorch MoE stacks from first principles and microbenchmarks, with nothing taken from a timing
of such a stack:
  - kernels per op: read from the code such stacks run (transformers' Llama/Qwen3/Mixtral/DeepSeek-V2 layers:
    RMSNorm in float32, rotate-half RoPE, Qwen3's per-head q/k RMSNorm (steps `when: qk_norm`), SDPA attention,
    softmax/top-k routers; `eager` experts as transformers' loop over the experts hit, `grouped` as Megatron's
    permute -> grouped GEMM -> unpermute, `hf-grouped_mm` as transformers' grouped_mm_experts_forward), and for
    EP > 1 Megatron's split-size exchange and chunk sort; `hf-eager` and `hf-grouped_mm` also run a transformers
    model's own ops around its layers (model_inputs, final_norm: transformers_model_inputs);
  - GPU time: GEMMs and attention at the hardware profile's own rates (efficiency 1); every other kernel moves
    the bytes its dtypes say (bf16 2 bytes, float32 4, int64 8; read + write per element of the tensor it works
    on) through the hardware profile's memory curve;
  - backward: autograd's kernels of each forward kernel, as moesim's own convention has it (LayerOps.hpp): a
    bandwidth-bound kernel's gradient moves twice its forward bytes, GEMMs give moesim's dgrad and wgrad; where
    autograd's formula launches other kernels they are spelled out (grads_of): SwiGLU's product (two multiplies),
    silu_backward and the fused projection's chunk (a cat); an advanced index's gradient (index_put_ with
    accumulate: a zero-filled gradient, the indices linearized and sorted, the put, the accumulation); the loop's
    routing weights where they train the router (transformers); the stacked weights' per-expert slice;
  - host: each eager op costs the framework's dispatch, measured by kernels/tools/torch_dispatch_bench.py
    (DISPATCH, per op class), plus a CUDA launch (launch_bench's launch_host, LAUNCH); a device -> host copy
    waits for the GPU and then costs the round trip launch_bench measures beyond a launch (launch_roundtrip −
    launch_host − launch_device);
  - host work beside launches, from kernels/tools/torch_host_costs.py on a GPU host (HOST_COSTS, the mean over the
    runs of every file given): Megatron's sort_chunks_by_idxs costs per chunk of the EP exchange (split views,
    list items, cat inputs: the slope between 8 and 128 chunks, forward and backward), and launching an all-to-all
    costs all_to_all_single with split lists plus the autograd Function around it. (The same tool finds a GEMM's
    and attention's host cost at a layer's sizes within the spread of other ops', so they cost as the layer cases.)
  - the step's context, from kernels/tools/torch_step_context.py on a GPU host (STEP_CONTEXT, CUDA runs): the
    microbenchmarks above time a few ops in a loop, while a step issues hundreds of different ops before it
    repeats one, so every op costs the host more; all of the host costs above but the GPU's round trip are
    multiplied by the measured ratio of an op's cost in a chain of all distinct ops to its cost in a cycle of 8
    (forward, and backward for what autograd runs);
  - a collective's launch in the step's context, from kernels/tools/torch_op_context.py (and its first version,
    torch_collective_context.py) on GPU hosts: all_to_all_single with split lists, launched and waited for after a
    chain of distinct ops, costs the host its measured median there (the mean over the runs and their ranks), the
    autograd Function around it the op's cost in context. That is 3.4-4.4x the same launch in a warm loop (an op
    loses 1.4x): it runs far more host code. The in-context median is taken as measured, not as a ratio times
    torch_host_costs' warm minimum (which gave 142 us where the runs measure 183-269: a minimum of one tool times
    a median ratio of another); the stacks' own dispatch, untraced, costs 254-374 us a call with its Python
    wrapper and wait (data/calibration/2026-11-27-nvidia-h200-x4-ep-path). The same tool measures a GEMM's and
    SDPA's launch after such a chain at 3.5-3.8x their warm cost, but the stacks' own ranges show them far below
    that (a linear 59 us in a layer against 123-135 after the chain): a chain of 57 distinct ops is a harsher
    context than a layer's for them, and only the collectives take the in-context cost;
  - GPU time of the elementwise ops that PyTorch runs on its generic path (an operand broadcast or a strided view:
    RMSNorm's casts and multiplies, RoPE's rotate-half, SwiGLU on the halves of a fused projection, the routing
    weight's multiply): kernels/tools/torch_elementwise_paths.py (ELEMENTWISE) times each such op of these layers
    against a vectorized multiply of the same case on a GPU. The generic path streams at about the same rate on
    H100 and H200 (its SMs, not the HBM, set the pace), so such a step moves its bytes at most at its op's measured
    rate (`max_GB_per_s`: the median over cases of 16,384 rows and more, bf16, averaged over the GPUs), in forward
    and in backward, whose kernels take the same path (not measured there); measured ops whose rate follows the
    HBM move their bytes times their slowdown on the memory curve;
  - ranks that meet at collectives: host-bound ranks wait for the slowest at every one, and ranks issue at different
    speeds (kernels/tools/torch_host_jitter.py, JITTER: segments of 56 ops between syncs on 2 and 4 processes of a
    GPU host; the slowest rank's issue over the ranks' mean); the profiles' `host.rank_spread` is the spread of a
    normal speed factor that gives those ratios as 1 + spread x E[max of N normals], fit over the runs;
  - GPU time of index_add_ (the scatter-add into token order): kernels/tools/torch_index_add_rates.py (INDEX_ADD)
    times it against a dense add of as many elements on a GPU; its atomic additions in bf16 run several times
    slower than streaming, so the step moves the dense add's bytes times the median ratio (its backward, a
    gather, streams);
  - host time to free a forward's autograd graph where a forward runs without a backward (`--phase forward`):
    kernels/tools/torch_graph_free.py (GRAPH_FREE) times the free of chains of elementwise ops and of linear +
    SiLU layers on a GPU host; `host.graph_free_us_per_launch` is the median over its CUDA runs' cases of the
    microseconds per node, each forward launch taken as one node.

    python3 cost/implementations/make_builtins.py DISPATCH.json LAUNCH.json MEASUREMENTS.json... OUT_DIR

MEASUREMENTS are torch_host_costs, torch_step_context, torch_op_context (or torch_collective_context),
torch_index_add_rates, torch_elementwise_paths, torch_host_jitter, torch_grouped_mm_bench and torch_graph_free
records, told apart by their `tool` key.
"""
import json
import math
import os
import statistics
import sys


# torch._grouped_mm on SM90 (aten/src/ATen/native/cuda/GroupMM.cu, torch 2.8-2.11): CUTLASS's grouped kernel
# with a 2x1 cluster along the rows, 64x128 tiles where the rows per group (the launch's mean) or the columns
# are at most 128, else 128x256: rows are computed in whole multiples of 128 and of 256.
TORCH_GROUPED_MM_ROW_TILES = [{"max_mean_rows": 128, "rows": 128}, {"rows": 256}]
STORE_MAX_ROWS = 512  # where the gradient's store is at least about a quarter of a grouped wgrad (H200)


def grouped_mm_model(records):
    """torch._grouped_mm's `grouped` model (IMPL_FORMAT.md) from torch_grouped_mm_bench records: at the fewest rows
    per expert the forward streams its bytes (weights and rows), and their rate is the stream rate; a grouped wgrad
    over a dense one of the same FLOPs (one process, one clock) is the store of the weight gradient, whose bytes
    over that time are the store rate. Medians over the uniform cases (the Zipf cases are for checking it)."""
    stream, store = [], []
    for r in records:
        fewest = min(x["rows_per_group"] for x in r["results"])
        for c in r["results"]:
            if "rows" in c:
                continue
            g, rows, n, k = c["groups"], c["rows_per_group"], c["n"], c["k"]
            if rows == fewest:
                stream.append(g * (rows * (n + k) + n * k) * 2 / (c["forward_us"] * 1e3))
            if rows <= STORE_MAX_ROWS and c["wgrad_us"] > c["dense_wgrad_us"]:
                store.append(g * n * k * 2 / ((c["wgrad_us"] - c["dense_wgrad_us"]) * 1e3))
    return {"row_tiles": TORCH_GROUPED_MM_ROW_TILES, "stream_GB_per_s": round(statistics.median(stream)),
            "store_GB_per_s": round(statistics.median(store))}


def step_context(records):
    """Host cost of an op inside a step over its cost in a warm microbenchmark loop (forward, backward): the mean over
    the CUDA runs of torch_step_context of their ratios (chain of all distinct ops / cycle of 8)."""
    runs = [r for r in records if r["device"] == "cuda"]
    if not runs:
        sys.exit("make_builtins: no CUDA run of torch_step_context among the measurements")
    return {p: round(sum(r["distinct_over_cycle_8"][p] for r in runs) / len(runs), 3) for p in ("forward", "backward")}


def collective_context(records):
    """An all-to-all launch's host microseconds after a chain of distinct ops, and that over its cost in a warm loop:
    the means over the CUDA runs of torch_op_context (its all_to_all probe) and torch_collective_context of each
    run's mean over ranks of the median over rounds."""
    probes = [r["mean_over_ranks"]["all_to_all"] if r["tool"] == "moesim-torch-op-context"
              else dict(r["mean_over_ranks"], in_context_over_warm=r["in_context_over_warm"])
              for r in records if r["device"] == "cuda"]
    if not probes:
        sys.exit("make_builtins: no CUDA run of torch_op_context among the measurements")
    return {"in_context_us": round(statistics.mean(p["in_context"]["p50"] for p in probes), 2),
            "over_warm": round(statistics.mean(p["in_context_over_warm"] for p in probes), 3)}


def index_add_slowdown(records):
    """GPU time of a bf16 index_add_ over a dense add of as many elements: the median over every case measured."""
    ratios = sorted(r["ratio"] for record in records for r in record["results"] if r["dtype"] == "bfloat16")
    if not ratios:
        sys.exit("make_builtins: no bfloat16 case among the torch_index_add_rates records")
    middle = len(ratios) // 2
    return round(ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2, 3)


def expected_max_of_normals(n, steps=16000, low=-8.0, high=8.0):
    """E[max of n standard normals], as cost::expected_max_of_normals integrates it."""
    if n <= 1:
        return 0.0
    step = (high - low) / steps
    total = 0.0
    for i in range(steps):
        x = low + (i + 0.5) * step
        density = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        total += x * n * density * (0.5 * math.erfc(-x / math.sqrt(2))) ** (n - 1)
    return total * step


def rank_spread(records):
    """The spread of ranks' host speed that makes 1 + spread x E[max of N normals] fit the slowest rank's issue over
    the ranks' mean that torch_host_jitter measures with N processes (least squares through the origin over the
    runs of more than one process)."""
    runs = [(r["processes"], r["summary"]["slowest_issue_over_mean"]["mean"] - 1) for r in records if r["processes"] > 1]
    if not runs:
        sys.exit("make_builtins: no torch_host_jitter run of more than one process among the measurements")
    e = {n: expected_max_of_normals(n) for n, _ in runs}
    return round(sum(excess * e[n] for n, excess in runs) / sum(e[n] ** 2 for n, _ in runs), 3)


def graph_free_us(records):
    """Microseconds per autograd node to free a forward's graph on a GPU host: the median over the CUDA runs' cases
    (chains that save nothing, linear layers that save their inputs) of each case's median over rounds."""
    per_node = [c["us_per_node_p50"] for r in records if r["device"] == "cuda" for c in r["results"]]
    if not per_node:
        sys.exit("make_builtins: no CUDA run of torch_graph_free among the measurements")
    return round(statistics.median(per_node), 3)


PATH_MIN_ROWS = 16384  # below, a case is short enough for launch latency to blur the path's streaming rate


def elementwise_paths(records):
    """Per measured op, (its bf16 GPU time over a vectorized multiply's for its bytes, its GB/s): per record (a GPU)
    the medians over the cases of PATH_MIN_ROWS rows or more, then the means over records; and the ops whose rate
    does not follow the GPU's HBM (between the fastest- and slowest-streaming GPU measured, their GB/s move by
    less than half as much as the vectorized multiply's): those are capped at their rate, the rest scale with
    the memory curve."""
    per_gpu = []
    for record in records:
        ratios, rates = {}, {}
        for r in record["results"]:
            if r["dtype"] == "bfloat16" and r["rows"] >= PATH_MIN_ROWS:
                ratios.setdefault(r["op"], []).append(r["over_dense_rate"])
                rates.setdefault(r["op"], []).append(r["GB_per_s"])
        per_gpu.append({op: (statistics.median(v), statistics.median(rates[op])) for op, v in ratios.items()})
    ops = set.intersection(*(set(g) for g in per_gpu))
    slow, fast = min(per_gpu, key=lambda g: g["dense_mul"][1]), max(per_gpu, key=lambda g: g["dense_mul"][1])
    dense_move = fast["dense_mul"][1] / slow["dense_mul"][1] - 1

    def capped(op):
        return dense_move > 0 and abs(fast[op][1] / slow[op][1] - 1) < dense_move / 2

    return {op: {"ratio": round(sum(g[op][0] for g in per_gpu) / len(per_gpu), 2),
                 "GB_per_s": round(sum(g[op][1] for g in per_gpu) / len(per_gpu)), "capped": capped(op)}
            for op in sorted(ops) if op != "dense_mul"}


def exchange_costs(records):
    """Host microseconds per chunk of sort_chunks (forward, backward) and of an autograd Function's forward: the mean
    over the runs of torch_host_costs (each a process count: concurrent ranks did not move them) of the mean over
    ranks of each one's minimum over repeats."""
    few, many = records[0]["chunk_counts"]
    if any(r["chunk_counts"] != [few, many] for r in records):
        sys.exit("make_builtins: torch_host_costs records measured at different chunk counts")
    runs = [run["mean_over_ranks"] for r in records for run in r["runs"]]

    def mean(key):
        values = [r[key]["min"] for r in runs if key in r]
        return sum(values) / len(values)

    def per_chunk(pass_):
        return (mean(f"sort_chunks_{many}_{pass_}_per_op") - mean(f"sort_chunks_{few}_{pass_}_per_op")) / (many - few)

    return {k: round(v, 2) for k, v in {
        "chunk_forward": per_chunk("forward"), "chunk_backward": per_chunk("backward"),
        "autograd_function": mean("autograd_function_forward_per_op")}.items()}


def load_inputs(dispatch_file, launch_file):
    dispatch = json.load(open(dispatch_file))
    launch = json.load(open(launch_file))
    results = {r["measure"]: r["time_us"]["p50"] for r in launch["results"]}
    # The least-disturbed repeat: the bench shares its CPU with whatever else runs (see its README).
    host = {name: r["min"] for name, r in dispatch["results"].items()}
    return dispatch, launch, host, results


LAYER_CASES = ("rmsnorm", "swiglu", "rope")


class Costs:
    """Host microseconds of one eager kernel op in forward and of the backward autograd runs for it (the mean of
    torch_dispatch_bench's layer cases, each plus a CUDA launch), of a launch alone, of a device -> host copy's
    host side, and of the exchange's host work, all in a step's context; and of the wait that ends a device -> host
    copy (the round trip beyond a launch, the GPU's: not scaled). Ops of every class cost alike: the layer cases
    differ by less than the bench's own spread."""

    def __init__(self, host, launch, exchange, context, collective, index_add_slowdown, paths, grouped_mm):
        forward, backward = context["forward"], context["backward"]
        self.grouped_mm = grouped_mm  # the `grouped` model of torch._grouped_mm's GEMM steps
        self.paths = paths
        self.context = context
        self.collective_context = collective
        self.index_add_slowdown = index_add_slowdown
        self.launch_alone = launch["launch_host"]
        self.launch = round(self.launch_alone * forward, 2)
        self.tolist = round(host["tolist"] * forward, 2)
        layer_forward = sum(host[f"layer_{c}_forward_per_op"] for c in LAYER_CASES) / len(LAYER_CASES)
        layer_backward = sum(host[f"layer_{c}_backward_per_op"] for c in LAYER_CASES) / len(LAYER_CASES)
        self.forward = round((layer_forward + launch["launch_host"]) * forward, 2)
        self.backward = round((layer_backward + launch["launch_host"]) * backward, 2)
        self.collective_launch = collective["in_context_us"]  # no autograd Function around it
        self.exchange = {"chunk_forward": round(exchange["chunk_forward"] * forward, 2),
                         "chunk_backward": round(exchange["chunk_backward"] * backward, 2),
                         "all_to_all": round(self.collective_launch + exchange["autograd_function"] * forward, 2)}
        self.notice = max(0.0, launch["launch_roundtrip"] - launch["launch_host"] - launch["launch_device"])

    def op(self, kind=None, views=0):
        """A forward kernel op (its kind and preceding views are in the layer cases' average)."""
        return self.forward

    def backward_op(self):
        return self.backward

    def bytes_on_path(self, bytes_per_element, op):
        """Bytes per element of a step that runs as measured op `op` of torch_elementwise_paths, with its rate cap
        (GB/s) where its rate does not follow the HBM: (bytes, cap) then, else its bytes times its slowdown."""
        if op not in self.paths:
            sys.exit(f"make_builtins: no torch_elementwise_paths measurement of {op}")
        path = self.paths[op]
        if path["capped"]:
            return (bytes_per_element, path["GB_per_s"])
        return round(bytes_per_element * path["ratio"], 2)


# Step builders (cost/IMPL_FORMAT.md). bpe: bytes per element of rows x width.
def mem(label, rows, width, bpe, host, repeat="once", when=None):
    """bpe: bytes per element, or (bytes per element, GB/s cap) from Costs.bytes_on_path."""
    bpe, cap = bpe if isinstance(bpe, tuple) else (bpe, None)
    s = {"kind": "memory", "label": label, "rows": rows, "width": width, "bytes_per_element": bpe, "host_us": host}
    if cap:
        s["max_GB_per_s"] = cap
    if repeat != "once":
        s["repeat"] = repeat
    if when:
        s["when"] = when
    return s


def gemm(host, name="*", repeat="once", grouped=None):
    s = {"kind": "gemm", "label": "gemm" if name == "*" else name, "gemm": name, "efficiency": 1.0, "host_us": host}
    if repeat != "once":
        s["repeat"] = repeat
    if grouped:
        s["grouped"] = grouped
    return s


def fixed(label, time_us, host, repeat="once", when=None):
    s = {"kind": "fixed", "label": label, "time_us": time_us, "host_us": host}
    if repeat != "once":
        s["repeat"] = repeat
    if when:
        s["when"] = when
    return s


def sync(host, repeat="once", when=None):
    s = {"kind": "sync", "label": "sync", "host_us": host}
    if repeat != "once":
        s["repeat"] = repeat
    if when:
        s["when"] = when
    return s


def backward_of(steps, c):
    """Autograd's kernels for forward `steps`, in reverse order: twice the traffic per bandwidth-bound kernel,
    moesim's dgrad/wgrad GEMMs, the attention backward; host syncs, sorts and copies to the host have none."""
    out = []
    for s in reversed(steps):
        if "backward" in s:  # the kernels autograd runs for it, spelled out (grads_of)
            out.extend(clean(s["backward"]))
        elif s["kind"] == "memory" and not s.get("no_grad"):
            b = dict(s, bytes_per_element=s.get("backward_bytes", 2 * s["bytes_per_element"]), host_us=c.backward_op())
            b.pop("atomic_adds_per_element", None)
            if "host_us_per_chunk" in s:
                b["host_us_per_chunk"] = c.exchange["chunk_backward"]
            out.append({k: v for k, v in b.items() if k not in INTERNAL_KEYS})
        elif s["kind"] == "gemm":
            name = s["gemm"]
            for part in (["*"] if name == "*" else [name + ".dgrad", name + ".wgrad"]):
                out.append(gemm(c.backward_op(), part, s.get("repeat", "once"), s.get("grouped")))
    return out


INTERNAL_KEYS = ("no_grad", "backward_bytes", "backward")  # builder marks, not profile keys


def grads_of(step, kernels, c):
    """Marks forward `step` with the kernels of its backward node, each (label, rows, width, bytes per element)
    with the step's repeat, condition and rate cap; the node's backward host cost is shared among them."""
    host = round(c.backward_op() / len(kernels), 2)
    keep = {k: step[k] for k in ("repeat", "when", "max_GB_per_s") if k in step}
    step["backward"] = [dict(mem(label, rows, width, bpe, host), **keep) for label, rows, width, bpe in kernels]
    return step


def index_backward(src_rows, src_width, index_math):
    """The gradient of `src[index...]` on CUDA (index_put_ with accumulate, its deterministic sort path): a
    zero-filled gradient the shape of src, the indices linearized (`index_math`: int64 kernels over the indexed
    rows), sorted with their positions, the rows put, and the result added into src's accumulated gradient."""
    return ([("index_grad_zero", src_rows, src_width, 2)] + [(m, "expert_rows", "one", b) for m, b in index_math] +
            [("index_sort", "expert_rows", "one", 32), ("index_put", "expert_rows", src_width, 6),
             ("index_grad_accumulate", src_rows, src_width, 6)])


ROWS_INDEX_MATH = (("index_remainder", 16), ("index_mul", 16), ("index_div", 16), ("index_arange", 8))
PAIR_INDEX_MATH = (("index_remainder", 16), ("index_mul", 16), ("index_remainder", 16), ("index_mul", 16),
                   ("index_add", 24), ("index_div", 16), ("index_arange", 8))


def no_grad(step):
    step["no_grad"] = True
    return step


def clean(steps):
    return [{k: v for k, v in s.items() if k not in INTERNAL_KEYS} for s in steps]


def index_add(c, rows, repeat="once"):
    """out.index_add_(0, token, rows) in bf16: a dense add's 6 bytes per element, slowed by the atomics as measured
    on the H100, and one atomic add per element, which the GPU's own atomic-add rate times where its hardware profile
    has one (on the H200 the dense add is faster and the atomics are not); its backward gathers the gradient's rows
    (twice the dense bytes, streaming, no atomics)."""
    s = mem("index_add", rows, "hidden", round(6 * c.index_add_slowdown, 2), c.op("index_add"), repeat)
    s["atomic_adds_per_element"] = 1
    s["backward_bytes"] = 12
    return s


def rms_norm(c, width="hidden"):
    """HF RMSNorm: x.float(), pow, mean, + eps, rsqrt, *, .to(bf16), weight *."""
    e, r, b = c.op("elementwise"), c.op("reduction"), c.bytes_on_path
    return [mem("to_float", "tokens", width, b(6, "norm_to_float"), e), mem("pow", "tokens", width, b(8, "norm_pow"), e),
            mem("mean", "tokens", width, b(4, "norm_mean"), r), mem("add_eps", "tokens", "one", 8, e),
            mem("rsqrt", "tokens", "one", 8, e), mem("mul", "tokens", width, b(8, "norm_mul_rsqrt"), e),
            mem("to_bf16", "tokens", width, b(6, "norm_to_bf16"), e),
            mem("mul_weight", "tokens", width, b(4, "norm_mul_weight"), e)]


def rope(c, width):
    """Rotate-half RoPE of one tensor: -x[..., half:], cat, x * cos, rotated * sin, add (bf16)."""
    e, b = c.op("elementwise", views=2), c.bytes_on_path
    return [mem("neg", "tokens", width, b(2, "rope_neg"), e), mem("cat", "tokens", width, b(4, "rope_cat"), c.op("cat")),
            mem("mul_cos", "tokens", width, b(4, "rope_mul_cos"), e),
            mem("mul_sin", "tokens", width, b(4, "rope_mul_sin"), e), mem("add", "tokens", width, b(6, "rope_add"), e)]


def qk_norm(c):
    """Qwen3's q_norm and k_norm: HF RMSNorm over each head of the projected queries and keys, before RoPE."""
    return [dict(s, when="qk_norm") for s in rms_norm(c, "q_width") + rms_norm(c, "kv_width")]


def attention_qkv(c, kind):
    if kind != "mla":
        return [gemm(c.op("mm"))] + qk_norm(c) + rope(c, "q_width") + rope(c, "kv_width")
    # DeepSeek-V2: q projection, kv down-projection, latent RMSNorm, kv up-projection, RoPE on the rotary
    # parts (every head's of the queries, the one shared key's), q and k assembled by cat along the head
    # dim: the cat kernel RoPE's halves measure (moesim's GEMMs of the op, in its order, as one group).
    return ([gemm(c.op("mm", views=4))] + rms_norm(c, "kv_width") + rope(c, "q_rope") + rope(c, "k_rope")
            + [mem("cat_q", "tokens", "q_width", c.bytes_on_path(4, "rope_cat"), c.op("cat", views=2)),
               mem("cat_k", "tokens", "q_width", c.bytes_on_path(4, "rope_cat"), c.op("cat", views=2))])


def sort_kernels(c, rows):
    """torch.argsort(stable) of int64 keys: cub's onesweep radix sort, a histogram and 8 digit passes each
    after a memset of its lookback state, plus the index setup."""
    e = c.op()
    out = [no_grad(mem("sort_copy", rows, "one", 16, e)), no_grad(fixed("sort_indices", 0, c.launch))]
    for _ in range(8):
        out += [no_grad(fixed("memset", 0, c.launch)), no_grad(mem("radix_pass", rows, "one", 32, c.launch))]
    return out


def bincount(c, rows):
    """torch.bincount on the GPU: min and max read back (two syncs), a fill and a histogram."""
    e = c.op("elementwise")
    return [no_grad(mem("min", rows, "one", 8, c.op("reduction"))), no_grad(fixed("to_host", 0, c.launch)),
            no_grad(sync(c.notice)), no_grad(mem("max", rows, "one", 8, c.op("reduction"))),
            no_grad(fixed("to_host", 0, c.launch)), no_grad(sync(c.notice)),
            no_grad(mem("fill", "none", "experts", 8, e)), no_grad(mem("histogram", rows, "one", 8, e))]


def split_size_exchange(c):
    """EP > 1: the counts per expert go to every rank (one tiny all_to_all_single) and come to the host."""
    w = "ep>1"
    return [no_grad(fixed("cat_counts", 0, c.op("cat"), when=w)), no_grad(fixed("nccl_counts", 0, c.collective_launch, when=w)),
            no_grad(fixed("counts_to_host", 0, c.launch, when=w)), no_grad(sync(c.notice + c.tolist, when=w))]


def permute(c, when=None):
    e = c.op("elementwise")
    steps = (sort_kernels(c, "routed_rows") + [no_grad(mem("floor_divide", "routed_rows", "one", 16, e)),
                                              mem("gather_rows", "routed_rows", "hidden", 4, c.op("index"))]
            + bincount(c, "routed_rows") + split_size_exchange(c))
    return [dict(s, when=when) for s in steps] if when else steps


def unpermute(c, when=None):
    e = c.op("elementwise")
    steps = [mem("zeros", "tokens", "hidden", 2, e), no_grad(mem("weights_by_row", "routed_rows", "one", 12, c.op("index"))),
            no_grad(mem("floor_divide", "routed_rows", "one", 16, e)),
            mem("mul_weight", "routed_rows", "hidden", c.bytes_on_path(4, "mul_rows"), e),
            index_add(c, "routed_rows")]
    return [dict(s, when=when) for s in steps] if when else steps


def swiglu_activation(c, rows, width, repeat="once"):
    """silu(gate) * up on the halves of a fused gate/up projection (strided views). Backward: the product's two
    gradients (a multiply each, the forward's bytes), silu's (silu_backward reads the gradient and the gate and
    writes one: 6 bytes where the forward moves 4), and the halves' gradients joined (chunk's backward: a cat,
    reading and writing both halves)."""
    e, b = c.op("elementwise", views=1), c.bytes_on_path
    silu = mem("silu", rows, width, b(4, "silu_chunk"), e, repeat)
    mul = mem("mul", rows, width, b(6, "mul_chunk"), e, repeat)
    grads_of(mul, [("mul_grad_up", rows, width, mul["bytes_per_element"]),
                   ("mul_grad_act", rows, width, mul["bytes_per_element"])], c)
    silu_grad = dict(silu, bytes_per_element=round(1.5 * silu["bytes_per_element"], 2), host_us=c.backward_op())
    silu["backward"] = [silu_grad, mem("chunk_cat", rows, width, 8, c.backward_op(), repeat)]
    return [silu, mul]


def chunk_sorts(c):
    """EP > 1: the per-expert counts to the device and the received chunks sorted expert-major (split + cat,
    Megatron's sort_chunks_by_idxs) before the experts, and sorted back after them: (before, after). A sort's
    gradient is the inverse sort: split views of the gradient and one cat, as many bytes as the forward's."""
    w = "ep>1"

    def sort(label):
        return dict(mem(label, "received_rows", "hidden", 4, c.op("cat"), when=w),
                    host_us_per_chunk=c.exchange["chunk_forward"], backward_bytes=4)
    return ([no_grad(fixed("counts_to_device", 0, c.op("elementwise"), when=w)), no_grad(sync(c.notice, when=w)),
             sort("sort_chunks")], [sort("unsort_chunks")])


def grouped_experts(c):
    """Megatron's GroupedMLP: at EP > 1 the chunk sorts, offsets, two grouped GEMMs."""
    before, after = chunk_sorts(c)
    return (before + [no_grad(fixed("offsets", 0, c.op("reduction"))), no_grad(fixed("offsets_scan", 0, c.launch)),
                      no_grad(fixed("prepare_grouped_gemm", 0, c.launch)),
                      gemm(c.op("mm"), "fc1", grouped=c.grouped_mm)]
            + swiglu_activation(c, "received_rows", "expert_ffn")
            + [no_grad(fixed("prepare_grouped_gemm", 0, c.launch)), gemm(c.op("mm"), "fc2", grouped=c.grouped_mm)]
            + after)


def loop_experts(c, transformers=False):
    """A loop over the experts hit: the experts hit (bincount, nonzero, tolist: syncs), then per expert hit its
    rows (a mask and nonzero: a sync), a gather, the SwiGLU MLP as two GEMMs, the router weight, index_add_.
    The gather's gradient is an index backward (index_backward). transformers' eager experts
    (Qwen3MoeExperts.forward and its kin) iterate over a tensor of expert ids, and every use of the 0-d id reads
    it back to the host: the `expert_idx == num_experts` test (a compare), the slice of the one-hot expert mask
    (then copied contiguous for torch.where), and each stacked weight's slice, four syncs per expert where the
    hand-written loop has none; their routing weights come from the router's softmax and train it, so the
    weight's index has a gradient too, and the weighted product three backward kernels (the rows' gradient, the
    weight's, summed over the width)."""
    e, p = c.op("elementwise"), "per_expert"
    head = [no_grad(mem("zeros", "received_rows", "hidden", 2, e))] + bincount(c, "received_rows") + [
        no_grad(fixed("nonzero", 0, c.op("nonzero"))), no_grad(fixed("to_host", 0, c.launch)),
        no_grad(sync(c.notice + c.tolist))]
    gather = grads_of(mem("gather", "expert_rows", "hidden", 4, c.op("index"), p),
                      index_backward("received_rows", "hidden", ROWS_INDEX_MATH), c)
    weight = mem("weight", "expert_rows", "one", 12, c.op("index"), p)
    mul_weight = mem("mul_weight", "expert_rows", "hidden", c.bytes_on_path(4, "mul_rows"), e, p)
    found = [no_grad(fixed("nonzero", 0, c.op("nonzero"), p)), no_grad(fixed("to_host", 0, c.launch, p)),
             no_grad(sync(c.notice, p))]
    if transformers:
        read_back = [no_grad(fixed("to_host", 0, c.launch, p)), no_grad(sync(c.notice, p))]  # a 0-d id's .item()
        rows = [no_grad(mem("hit_check", "none", "one", 9, e, p))] + 2 * read_back + [
            no_grad(mem("mask_contiguous", "routed_rows", "one", 16, e, p))] + found
        weight_slice = read_back
        grads_of(weight, index_backward("routed_rows", "one", PAIR_INDEX_MATH), c)
        grads_of(mul_weight, [("mul_weight_grad_rows", "expert_rows", "hidden", mul_weight["bytes_per_element"]),
                              ("mul_weight_grad_weight", "expert_rows", "hidden", 6),
                              ("mul_weight_grad_sum", "expert_rows", "hidden", 2)], c)
    else:
        rows = [no_grad(mem("mask", "received_rows", "one", 9, e, p))] + found + [
            no_grad(mem("rows", "expert_rows", "one", 16, c.op("index"), p))]
        weight_slice = []
        no_grad(weight)
    body = rows + [gather] + weight_slice + [gemm(c.op("mm"), "fc1", p)] + \
        swiglu_activation(c, "expert_rows", "expert_ffn", p) + weight_slice + [
        gemm(c.op("mm"), "fc2", p), weight, mul_weight, index_add(c, "expert_rows", p)]
    return head + body


def transformers_permute(c):
    """transformers' grouped_mm experts up to the first grouped GEMM: the (token, expert) pairs sorted by expert,
    the token rows and routing weights gathered in that order, per-expert counts and offsets on the device
    (histc, cumsum: no sync), and the gathered rows of out-of-range experts zeroed in place (masked_fill_, a mask
    [R, 1]). With EP > 1 (which transformers does not run) the counts go to every rank as in `grouped`."""
    e, b = c.op("elementwise"), c.bytes_on_path
    return (sort_kernels(c, "routed_rows") + [
        no_grad(mem("floor_divide", "routed_rows", "one", 16, e)),
        mem("gather_rows", "routed_rows", "hidden", 4, c.op("index")),
        mem("gather_weights", "routed_rows", "one", 12, c.op("index")),
        no_grad(mem("to_int", "routed_rows", "one", 12, e)),
        no_grad(mem("histc_fill", "none", "experts", 4, c.launch)), no_grad(mem("histc", "routed_rows", "one", 4, e)),
        no_grad(fixed("cumsum", 0, c.op("reduction"))), no_grad(fixed("cumsum_scan", 0, c.launch)),
        no_grad(mem("out_of_range", "routed_rows", "one", 9, e)), no_grad(mem("clamp", "routed_rows", "one", 16, e)),
        mem("zero_out_of_range", "routed_rows", "hidden", b(4, "masked_fill"), e)] + split_size_exchange(c))


def transformers_experts(c):
    """Two grouped GEMMs with SwiGLU on the fused projection's halves; the out-of-range rows zeroed after each
    projection (masked_fill, a mask [R, 1]) and the routing weight applied to the rows (a multiply by [R, 1]). The
    EP > 1 chunk sorts are `grouped`'s."""
    e, b = c.op("elementwise"), c.bytes_on_path
    before, after = chunk_sorts(c)
    return (before + [no_grad(fixed("prepare_grouped_gemm", 0, c.launch)),
                      gemm(c.op("mm"), "fc1", grouped=c.grouped_mm),
                      mem("zero_out_of_range_fc1", "received_rows", "expert_ffn", b(8, "masked_fill"), e)]
            + swiglu_activation(c, "received_rows", "expert_ffn")
            + [no_grad(fixed("prepare_grouped_gemm", 0, c.launch)), gemm(c.op("mm"), "fc2", grouped=c.grouped_mm),
               mem("zero_out_of_range_fc2", "received_rows", "hidden", b(4, "masked_fill"), e),
               mem("mul_weight", "received_rows", "hidden", b(4, "mul_rows"), e)] + after)


def transformers_unpermute(c):
    """The rows back in (token, expert) order through the inverse permutation (index_put_ of an arange, a row
    gather) and summed over each token's top-k (a reduction over [T, k, H]: it reads every row once; its write,
    1/k of that, is not counted)."""
    e = c.op("elementwise")
    return [no_grad(fixed("arange", 0, e)), no_grad(mem("inverse_permutation", "routed_rows", "one", 24, c.op("index"))),
            mem("gather_rows", "routed_rows", "hidden", 4, c.op("index")),
            mem("sum_top_k", "routed_rows", "hidden", 2, c.op("reduction"))]


def whole_weight_gradients(c):
    """Backward of indexing the stacked expert weights per expert (transformers 5.x: gate_up_proj [E, 2F, H],
    down_proj [E, H, F], `weight[expert]` in the loop): autograd's index backward zero-fills a gradient of the
    whole stacked weight for every expert, copies the expert's slice into it (one expert's bytes: left out, a
    launch), and the weight's accumulated gradient adds it (read both, write one); bf16, per expert_weights element
    (E F H): gate/up 2 x 2 bytes to fill and 2 x 6 to add, down 2 and 6. The first expert's gradient is assigned,
    not added, which this counts as an addition too. Host: the backward of one forward op per weight (the
    indexing), shared by its three kernels."""
    b, p = round(c.backward_op() / 3, 2), "per_expert"
    return [mem("fill_down_grad", "none", "expert_weights", 2, b, p), fixed("copy_down_grad", 0, b, p),
            mem("accumulate_down_grad", "none", "expert_weights", 6, b, p),
            mem("fill_gate_up_grad", "none", "expert_weights", 4, b, p), fixed("copy_gate_up_grad", 0, b, p),
            mem("accumulate_gate_up_grad", "none", "expert_weights", 12, b, p)]


def gate(c):
    e = c.op("elementwise")
    return [gemm(c.op("mm")), mem("to_float", "tokens", "experts", 6, e), mem("softmax", "tokens", "experts", 8, e),
            no_grad(mem("topk", "tokens", "experts", 4, c.op("topk"))), no_grad(mem("topk_sort", "tokens", "top_k", 24, c.launch)),
            mem("gather", "tokens", "top_k", 16, c.op("index")), mem("sum", "tokens", "top_k", 4, c.op("reduction")),
            mem("div", "tokens", "top_k", 8, e), mem("to_bf16", "tokens", "top_k", 6, e)]


def shared_experts(c):
    return ([gemm(c.op("mm"), "fc1")] + swiglu_activation(c, "tokens", "shared_ffn") + [gemm(c.op("mm"), "fc2")]
            + shared_gate(c))


def shared_gate(c):
    """Qwen2-MoE's gate on the shared experts' output (steps `when: shared_gate`): sigmoid(x W^T) * out with W
    [1, hidden]. The 1-wide projection reads the layer's input (a GEMV: its bytes); its backward is a dgrad as
    wide as the input, added into the input's gradient, and a wgrad that reads it again. The broadcast multiply's
    backward scales the output's gradient and sums that gradient times the output over the hidden dim."""
    e, when = c.op("elementwise"), "shared_gate"
    proj = grads_of(mem("gate_proj", "tokens", "hidden", 2, c.op("mm"), when=when),
                    [("gate_proj_dgrad", "tokens", "hidden", 2), ("gate_proj_grad_add", "tokens", "hidden", 6),
                     ("gate_proj_wgrad", "tokens", "hidden", 2)], c)
    scale = grads_of(mem("mul_gate", "tokens", "hidden", 4, e, when=when),
                     [("mul_gate_grad_output", "tokens", "hidden", 4), ("mul_gate_grad_gate", "tokens", "hidden", 6),
                      ("sum_gate_grad", "tokens", "hidden", 2)], c)
    return [proj, mem("sigmoid", "tokens", "one", 4, e, when=when), scale]


def transformers_model_inputs(c):
    """What transformers' decoder models (Qwen3MoeModel, MixtralModel, DeepseekV2Model; transformers 4.5x-5.x)
    run before their first layer when given inputs_embeds and no cache: cache_position = arange(seq) plus the
    past length, and position_ids from it; create_causal_mask's test for packed sequences (a diff of the
    position ids: cat and sub, then ne, and a cumsum: a cast and cub's two scan kernels) and whether SDPA's
    is_causal can stand for the mask (eq, a copy, and a device -> host copy of the answer: a sync); the rotary
    embedding's cos and sin (inv_freq expanded and the positions cast to float32, a float32 bmm, cat, cos and sin
    each times attention_scaling, both cast to the model's dtype). Every tensor is [1, seq] or [1, seq, head_dim]:
    latency-bound kernels at any sequence a layer runs."""
    e = c.op("elementwise")
    launches = ["arange", "add_past_length", "sub_first_position", "diff_cat", "diff_sub", "ne", "cumsum_cast", "cumsum_init",
                "cumsum_scan", "eq", "copy"]
    rotary = ["inv_freq_to_float", "positions_to_float", "bmm", "cat", "cos", "mul_scaling_cos", "sin",
              "mul_scaling_sin", "cos_to_dtype", "sin_to_dtype"]
    return ([no_grad(fixed(label, 0, e)) for label in launches] + [sync(c.tolist)]
            + [no_grad(fixed(label, 0, e)) for label in rotary])


def profile(name, style, c, inputs, description, model_ops=False):
    ops = []

    def add(op, steps, attention=None):
        for pass_, s in (("forward", clean(steps)), ("backward", backward_of(steps, c))):
            entry = {"op": op, "pass": pass_, "steps": s}
            if attention:
                entry["attention"] = attention
            ops.append(entry)

    add("attn_norm", rms_norm(c))
    for kind in ("mha", "gqa", "mla"):
        add("attn_qkv", attention_qkv(c, kind), kind)
    ops.append({"op": "attn_core", "pass": "forward",
                "steps": [fixed("memset", 0, c.launch), {"kind": "attention", "label": "sdpa", "time_factor": 1.0,
                                                          "host_us": c.op("mm", views=4)}]})
    ops.append({"op": "attn_core", "pass": "backward",
                "steps": [fixed("memset", 0, c.launch), {"kind": "attention", "label": "sdpa_backward",
                                                          "time_factor": 1.0, "host_us": c.backward_op()}]})
    add("attn_out", [gemm(c.op("mm", views=2))])
    add("residual_add", [mem("add", "tokens", "hidden", 6, c.op("elementwise"))])
    add("mlp_norm", rms_norm(c))
    add("gate", gate(c))
    if style == "transformers-grouped_mm":
        add("permute", transformers_permute(c))
        add("routed_experts", transformers_experts(c))
        add("unpermute", transformers_unpermute(c))
    else:
        # transformers' eager experts index the tokens directly: with one rank there is no permutation.
        multi_rank_only = "ep>1" if style == "loop" else None
        add("permute", permute(c, multi_rank_only))
        add("routed_experts", grouped_experts(c) if style == "grouped" else loop_experts(c, transformers=model_ops))
        if style == "loop":
            ops[-1]["steps"] += whole_weight_gradients(c)
        add("unpermute", unpermute(c, multi_rank_only))
    add("shared_experts", shared_experts(c))
    if model_ops:
        add("model_inputs", transformers_model_inputs(c))
        add("final_norm", rms_norm(c))
    launch_all_to_all = c.exchange["all_to_all"]
    return {
        "schema_version": 1, "kind": "moesim-implementation-profile", "name": name,
        "provenance": {"source": "built-in", "description": description, "hw_profile": "h100",
                       "date": inputs["date"], "traces": []},
        "host": {"cpu_model": inputs["cpu_model"], "rank_spread": inputs["rank_spread"],
                 "graph_free_us_per_launch": inputs["graph_free_us"]},
        "ops": ops,
        "collectives": {n: {"host_us": launch_all_to_all} for n in ("dispatch", "combine", "dispatch.bwd", "combine.bwd")},
    }


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    dispatch, launch, host, launch_results = load_inputs(sys.argv[1], sys.argv[2])
    measurement_files, out_dir = sys.argv[3:-1], sys.argv[-1]
    measurements = {}
    for f in measurement_files:
        record = json.load(open(f))
        measurements.setdefault(record.get("tool", record.get("kind")), []).append((os.path.basename(f), record))
    # host-costs-1.json was written while torch_host_costs was still called moesim-torch-host-contention.
    host_costs = measurements.get("moesim-torch-host-costs", []) + measurements.get("moesim-torch-host-contention", [])
    contexts = measurements.get("moesim-torch-step-context", [])
    collectives = measurements.get("moesim-torch-op-context", []) + measurements.get("moesim-torch-collective-context", [])
    index_adds = measurements.get("moesim-torch-index-add-rates", [])
    paths = measurements.get("moesim-torch-elementwise-paths", [])
    jitters = measurements.get("moesim-torch-host-jitter", [])
    grouped_mms = measurements.get("moesim-torch-grouped-mm-bench", [])
    graph_frees = measurements.get("moesim-torch-graph-free", [])
    kinds = (host_costs, contexts, collectives, index_adds, paths, jitters, grouped_mms, graph_frees)
    if not all(kinds) or sum(len(k) for k in kinds) != len(measurement_files):
        sys.exit("make_builtins: MEASUREMENTS must be torch_host_costs, torch_step_context, torch_op_context, "
                 "torch_index_add_rates, torch_elementwise_paths, torch_host_jitter, torch_grouped_mm_bench and "
                 "torch_graph_free records, at least one of each")
    c = Costs(host, launch_results, exchange_costs([r for _, r in host_costs]),
              step_context([r for _, r in contexts]), collective_context([r for _, r in collectives]),
              index_add_slowdown([r for _, r in index_adds]), elementwise_paths([r for _, r in paths]),
              grouped_mm_model([r for _, r in grouped_mms]))
    # The host costs come from several machines: the dispatch bench's, and the GPU hosts that measured the
    # exchange's host work and the step's and a collective's context.
    gpu_hosts = sorted({r.get("cpu_model", "") for _, r in host_costs + contexts + collectives} - {""})
    inputs = {"cpu_model": f"{dispatch['cpu_model']} (op dispatch); {', '.join(gpu_hosts)} (host work beside "
                           f"launches, step and collective context)", "date": dispatch["date_utc"][:10],
              "rank_spread": rank_spread([r for _, r in jitters]),
              "graph_free_us": graph_free_us([r for _, r in graph_frees])}
    sources = (f"host: {os.path.basename(sys.argv[1])} (torch_dispatch_bench, torch {dispatch['torch']}, "
               f"{dispatch['cpu_model']}) + launch_bench launch_host {c.launch_alone:.2f} us, round trip beyond a launch "
               f"{c.notice:.2f} us ({launch['gpus'][0]['name']}); "
               f"{', '.join(n for n, _ in host_costs)} (torch_host_costs); step context "
               f"{c.context['forward']:.3f}/{c.context['backward']:.3f} forward/backward "
               f"({len([r for _, r in contexts if r['device'] == 'cuda'])} CUDA runs of torch_step_context, "
               f"{contexts[0][1]['cpu_model']}); in a step: kernel op {c.forward:.2f}/{c.backward:.2f} us "
               f"forward/backward, sort_chunks {c.exchange['chunk_forward']:.2f}/{c.exchange['chunk_backward']:.2f} us "
               f"per chunk, all-to-all launch {c.exchange['all_to_all']:.2f} us (its launch as measured in a step's "
               f"context, {c.collective_context['over_warm']:.2f}x the warm loop's: {', '.join(n for n, _ in collectives)}, "
               f"torch_op_context); bytes from "
               f"dtypes, index_add_ "
               f"{c.index_add_slowdown:.2f}x a dense add's ({', '.join(n for n, _ in index_adds)}, torch_index_add_rates, "
               f"{index_adds[0][1]['gpu']}); ranks' host speed spread {inputs['rank_spread']:.3f} ("
               f"{len([r for _, r in jitters if r['processes'] > 1])} multi-process runs of torch_host_jitter, "
               f"{jitters[0][1]['cpu_model']}); a forward's autograd graph freed at {inputs['graph_free_us']} us per "
               f"forward launch ({', '.join(n for n, r in graph_frees if r['device'] == 'cuda')}, torch_graph_free, "
               f"{graph_frees[0][1]['cpu_model']}); generic-path elementwise ops (broadcast or strided operands) "
               f"at {min(p['GB_per_s'] for p in c.paths.values() if p['capped'])}-"
               f"{max(p['GB_per_s'] for p in c.paths.values() if p['capped'])} GB/s on any GPU, "
               f"{sum(p['capped'] for p in c.paths.values())} of {len(c.paths)} ops measured (the rest with the memory "
               f"curve) ({', '.join(r['gpu'] for _, r in paths)}, torch_elementwise_paths); GEMM and attention "
               f"at the hardware profile's rates; written by cost/implementations/make_builtins.py")
    model_ops = ("; with the model's own ops around its layers: transformers' positions, mask test and rotary "
                 "tables before the first layer, the final RMSNorm after the last")
    for name, style, what, model in (
            ("eager", "loop", "hand-written eager PyTorch MoE layers, routed experts as a loop over the experts hit "
             "(as transformers' eager experts run them, a transformers model as it ships is hf-eager)", False),
            ("grouped", "grouped", "hand-written eager PyTorch MoE layers, routed experts as permute -> grouped GEMM -> "
             "unpermute (Megatron GroupedMLP, a transformers model as it ships is hf-grouped_mm)", False),
            ("hf-eager", "loop", "transformers' MoE decoder models with experts_implementation=\"eager\" (a loop over "
             "the experts hit)" + model_ops, True),
            ("hf-grouped_mm", "transformers-grouped_mm", "transformers' MoE decoder models with "
             "experts_implementation=\"grouped_mm\" (its grouped_mm_experts_forward: sort, gather, masked rows, two "
             "torch._grouped_mm, weighted sum over the top-k)" + model_ops, True)):
        grouped_mm = "" if style == "loop" else (
            f"; torch._grouped_mm's groups each their own roofline: rows in tiles of 128/256 (GroupMM.cu), bytes "
            f"streamed at up to {c.grouped_mm['stream_GB_per_s']} GB/s and weight gradients stored at up to "
            f"{c.grouped_mm['store_GB_per_s']} GB/s ({', '.join(n for n, _ in grouped_mms)}, "
            f"torch_grouped_mm_bench, {', '.join(r['device'] for _, r in grouped_mms)})")
        p = profile(name, style, c, inputs, what + "; " + sources + grouped_mm, model)
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(p, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
