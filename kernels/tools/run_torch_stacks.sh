#!/usr/bin/env bash
# Times (and traces a chosen few of) the PyTorch reference stacks of kernels/torch_stacks on a GPU node,
# one JSON record per configuration, packed for the way back.
#
#   kernels/tools/run_torch_stacks.sh OUT_DIR PLAN        PLAN: x4 | x2 | x1 | x2i | x4i
#
#   x4  (4 GPUs)  one group after another: matrix `device` at EP 4, `device-ci` and `device` at EP 2 (GPUs
#       0,1) and at EP 1 (GPU 0), then `device-hf` (GPU 0). (Until 2026-11-28 the x4 and x2 plans ran the
#       groups after the first at once, sharing the host's CPUs; see x2i.) Each group may run its deadline
#       plus 50 s: TS_DEADLINE_A (EP 4, EP 2) and TS_DEADLINE_B (EP 1, transformers) must leave the four
#       within the call's limit (on 2026-11-28: 78, 79, 67 and 62 s, deadlines not reached).
#   x2  (2 GPUs)  as x4 from its EP 2 group on, without `device-ci`.
#   x1  (1 GPU)   `device` at EP 1, then `device-hf`.
#   x2i (2 GPUs)  the FarSkip pairs of `device` at EP 2, interleaved (run --interleave: regular and farskip
#       on one stack, steps alternating, speedup with a bootstrap 95% interval), TS_REPEATS times (default
#       2) one after another into rep1/, rep2/, ...; TS_ITERS timed steps of each schedule (default 40),
#       TS_WARMUP warm-up rounds (default 3); traces in rep1 only. Never two groups at once: host-bound
#       stacks share the host's CPUs, and a second group's host threads would move their step times (in
#       the x4 plan's phase B the same EP 2 pairs' speedups moved by 0.099 on average against the x2 plan's).
#   x4i (4 GPUs)  as x2i, the FarSkip pairs of `device` at EP 4 on GPUs 0-3 into ep4-rep1/, ep4-rep2/, ...
#       (TS_REPEATS, default 1 here); then one EP 2 repeat on GPUs 0,1 into ep2-rep1/ (no traces), a bridge to
#       the x2i folders measured on machines of the same kind. One group at a time, as in x2i. On 4x H200 a
#       full EP 4 repeat took 115-135 s and the EP 2 one 142 s: the default deadlines fit a 600 s call with
#       one repeat (at most 170 + 50 + 180 + 50 s); two repeats fit with TS_DEADLINE_A=160 TS_DEADLINE_B=130
#       (384 s, the last two EP 2 pairs skipped).
#
# TS_GROUPS (x4, x2, x1), a space-separated list of ep4 ep2 ep1 hf, runs only those groups.
# Each phase (x2i, x4i: each EP 4 or EP 2 repeat) starts no configuration after TS_DEADLINE_A seconds (x4i's
# EP 2 bridge: TS_DEADLINE_B; defaults 170 / 180; the rest are recorded as skipped) and is killed after 50 s
# more. Writes OUT_DIR/PLAN-records.tar.gz (records,
# logs, system.txt) and OUT_DIR/PLAN-traces-GROUP.tar (gzip'd Kineto traces), each kept under 15 MiB by
# leaving out the largest traces (named in dropped-traces.txt). MOESIM_GIT_SHA names the commit measured.
# TS_DEVICE=cpu runs the same command on the CPU, matrix `device` replaced by `cpu-smoke`
# (a smoke test of the script before device time; CUDA_VISIBLE_DEVICES is then ignored).
set -u
if [ $# -ne 2 ] || ! [[ "$2" =~ ^(x4|x2|x1|x2i|x4i)$ ]]; then
  echo "usage: $0 OUT_DIR x4|x2|x1|x2i|x4i" >&2
  exit 2
fi
out_dir=$1 plan=$2
here=$(cd "$(dirname "$0")/.." && pwd)  # kernels/
work=${TS_WORK_DIR:-/tmp/torch-stacks}/$plan
# A warm machine keeps /tmp between calls: start empty, or the last call's records would be packed again.
rm -rf "$work"
mkdir -p "$work" "$out_dir"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
deadline_a=${TS_DEADLINE_A:-170} deadline_b=${TS_DEADLINE_B:-180} device=${TS_DEVICE:-cuda}
start=$SECONDS

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  echo "MOESIM_GIT_SHA=${MOESIM_GIT_SHA:-unset} plan=$plan"
  nvidia-smi
  nvidia-smi topo -m
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
  python3 -c 'import torch, sys; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "grouped_mm", hasattr(torch, "_grouped_mm"))'
  python3 -c 'import transformers; print("transformers", transformers.__version__)'
  lscpu | head -20
} > "$work/system.txt" 2>&1

# group NAME GPUS NPROC MATRIX DEADLINE PORT [RUN ARGS...]: one torch_stacks run (or launch of NPROC
# processes).
group() {
  local name=$1 gpus=$2 nproc=$3 matrix=$4 deadline=$5 port=$6
  shift 6
  [ -n "${TS_GROUPS:-}" ] && ! [[ " $TS_GROUPS " == *" $name "* ]] && return
  [ "$device" = cpu ] && matrix=$(sed -E 's/(^|,)device(,|$)/\1cpu-smoke\2/g' <<< "$matrix")
  local cmd=(python3 -m torch_stacks.run)
  [ "$nproc" -gt 1 ] && cmd=(python3 -m torch_stacks.launch --nproc "$nproc" --port "$port" --)
  echo "=== $name start $((SECONDS - start)) s" >> "$work/summary.txt"
  CUDA_VISIBLE_DEVICES=$gpus timeout -k 10 $((deadline + 50)) "${cmd[@]}" --matrix "$matrix" \
    --out "$work/$name" --deadline "$deadline" --device "$device" "$@" > "$work/$name.log" 2>&1
  echo "=== $name exit $? at $((SECONDS - start)) s" >> "$work/summary.txt"
}

# interleaved NAME GPUS NPROC DEADLINE PORT REP: one repeat of the FarSkip pairs of `device`, interleaved;
# traces in the first repeat only.
interleaved() {
  local traces=()
  [ "$6" -gt 1 ] && traces=(--no-traces)
  group "$1" "$2" "$3" device "$4" "$5" --interleave --iters-override "${TS_ITERS:-40}" \
    --warmup-override "${TS_WARMUP:-3}" "${traces[@]}"
}

pack() {
  for dir in "$work"/*/; do
    local name
    name=$(basename "$dir")
    ls "$dir"/*.trace.json.gz > /dev/null 2>&1 || continue
    while :; do
      (cd "$work" && tar -cf "$out_dir/$plan-traces-$name.tar" "$name"/*.trace.json.gz)
      [ "$(stat -c %s "$out_dir/$plan-traces-$name.tar")" -lt $((15 * 1024 * 1024)) ] && break
      local biggest
      biggest=$(find "$dir" -name '*.trace.json.gz' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
      echo "$biggest" >> "$work/dropped-traces.txt"
      rm -f "$biggest"
    done
  done
  (cd "$work" && tar -czf "$out_dir/$plan-records.tar.gz" --exclude='*.trace.json.gz' .)
}

if [ "$plan" = x2i ]; then
  for rep in $(seq 1 "${TS_REPEATS:-2}"); do
    interleaved "rep$rep" 0,1 2 "$deadline_a" $((29550 + rep)) "$rep"
  done
elif [ "$plan" = x4i ]; then
  for rep in $(seq 1 "${TS_REPEATS:-1}"); do
    interleaved "ep4-rep$rep" 0,1,2,3 4 "$deadline_a" $((29560 + rep)) "$rep"
  done
  interleaved ep2-rep1 0,1 2 "$deadline_b" 29570 2
else
  native=device
  [ "$plan" = x4 ] && [ "$device" != cpu ] && native=device-ci,device  # its bf16 all-to-alls need NCCL
  [ "$plan" = x4 ] && group ep4 0,1,2,3 4 device "$deadline_a" 29541
  [ "$plan" != x1 ] && group ep2 0,1 2 "$native" "$deadline_a" 29542
  group ep1 0 1 "$native" "$deadline_b" 0
  group hf 0 1 device-hf "$deadline_b" 0
fi
wait
pack
cat "$work/summary.txt"
for log in "$work"/*.log; do
  echo "--- $(basename "$log"): $(grep -c ' ok ' "$log") ok, $(grep -c ' failed ' "$log") failed, $(grep -c ' skipped ' "$log") skipped"
  grep -E ' failed | skipped ' "$log" | head -5
done
ls -la "$out_dir"
