#!/usr/bin/env bash
# Builds kernels/ (layer_runner) on a GPU node and runs a named layer_runner matrix; the results
# feed `moesim validate --measured`.
#
#   kernels/tools/run_layer_validation.sh OUT_DIR LABEL MATRIX        MATRIX: x4 | x2 | x1
#
#   (x4 = x4-small + x4-large + x4-ar, split so that each part fits one 10-minute device call)
#   x4  4 GPUs, alltoall (EP4, forward): qwen3-30b-a3b, mixtral-8x7b, llama4-scout × tokens/rank
#       2048 (seq 2048) and 16384 (seq 4096) × routing balanced, zipf:1.2; schedules regular,
#       farskip, farskip-ce; 4 layers. Plus allreduce (TP=EP=4, prefill) for qwen3-30b-a3b and
#       mixtral-8x7b at 8192 tokens, seq 8192, schedules regular, farskip. Estimate ~4 min of runs.
#   x2  2 GPUs: qwen3-30b-a3b and mixtral-8x7b, 8192 tokens/rank (seq 4096), balanced and zipf:1.2,
#       the three schedules; one allreduce config (qwen3-30b-a3b, 8192 tokens, seq 8192). ~1.5 min.
#   x1  1 GPU (EP1, every expert local; what matters is compute-only): the three models at 2048
#       (seq 2048) and 16384 (seq 4096) tokens, regular only. ~1.5 min.
#
# Writes WORK/LABEL/{system.txt, build.log, summary.txt, <config>.log, <config>.json} (WORK =
# $MOESIM_WORK_DIR or /tmp/moesim-layer-validation) and packs it into OUT_DIR/LABEL.tar.gz after
# every config, so a run cut short still returns what finished. MOESIM_CONFIG_TIMEOUT caps each
# config (s, default 150); MOESIM_LAYER_ITERS="-w W -n N" overrides the iteration counts (-w 3 -n 20);
# MOESIM_LAYER_ARGS adds runner options to every config (e.g. "--op-profile on").
#
#   x1-profile   x1 with --op-profile on (per-step event timing on rank 0)
#   x8-small, x8-large, x8-ar   the x4-small and x4-large matrices at EP 8, and TP=EP=8 prefill for
#                qwen3-30b-a3b, mixtral-8x7b and llama4-scout (8192 tokens, seq 8192, regular and farskip)
#   x8-profile   the x4-profile configs at 8 GPUs
#   x4-profile   4 GPUs, --op-profile on: qwen3-30b-a3b and mixtral-8x7b at 2048 (seq 2048) and
#                16384 (seq 4096) tokens/rank, balanced, the three schedules
#   x4-order     the x4-profile configs without the profile, each with --pass-order blocked and then
#                interleaved (the runner's default), files named blocked-… and interleaved-…
#   x4-experts   qwen3-30b-a3b and mixtral-8x7b at 2048 tokens/rank, balanced, with --experts loop (the
#                runner's default) and then grouped, files named loop-… and grouped-…
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 OUT_DIR LABEL x4|x4-small|x4-large|x4-ar|x8-small|x8-large|x8-ar|x8-profile|x2|x1|x1-profile|x4-profile|x4-order|x4-experts" >&2
  exit 2
fi
out_dir=$1 label=$2 matrix=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
work_root=${MOESIM_WORK_DIR:-/tmp/moesim-layer-validation}
work=$work_root/$label
mkdir -p "$work" "$out_dir"
. "$repo/kernels/tools/gpu_build_env.sh"  # NCCL_NVLS_ENABLE=0, NCCL discovery, build
iters=${MOESIM_LAYER_ITERS:--w 3 -n 20}
extra=${MOESIM_LAYER_ARGS:-}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi
  nvidia-smi topo -m
  nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version
} > "$work/system.txt" 2>&1
moesim_find_nccl_root
echo "NCCL_ROOT=${nccl_root:-<toolkit>}" >> "$work/system.txt"
build=$repo/build-kernels
: > "$work/build.log"
start=$SECONDS
if ! moesim_build_kernels "$repo" "$build" "$work/build.log" layer_runner; then
  tail -40 "$work/build.log"
  exit 1
fi
echo "=== build: $((SECONDS - start)) s" | tee -a "$work/summary.txt"

pack() {
  tar -czf "$out_dir/$label.tar.gz" -C "$work_root" "$label"
  cp "$work/summary.txt" "$out_dir/$label-summary.txt"
}

# config NAME GPUS MOE_COMM MODEL TOKENS SEQ ROUTING SCHEDULES
config() {
  local name=$1 gpus=$2 comm=$3 model=$4 tokens=$5 seq=$6 routing=$7 schedules=$8
  echo "=== $name" | tee -a "$work/summary.txt"
  local begin=$SECONDS
  # shellcheck disable=SC2086  # $iters and $extra hold several options
  timeout "${MOESIM_CONFIG_TIMEOUT:-150}" "$build/layer_runner" --model "$repo/models/specs/$model.json" \
    --gpus "$gpus" --moe-comm "$comm" --tokens "$tokens" --seq "$seq" --layers 4 --routing "$routing" --seed 1 \
    --schedules "$schedules" $iters $extra -J "$work/$name.json" > "$work/$name.log" 2>&1
  local status=$?
  echo "=== $name: exit $status in $((SECONDS - begin)) s (total $((SECONDS - start)) s)" | tee -a "$work/summary.txt"
  grep -vE '^#' "$work/$name.log" | tail -4
  pack
}

alltoall_sizes() {  # alltoall_sizes GPUS SIZES...: SIZE = tokens:seq
  local gpus=$1
  shift
  for model in qwen3-30b-a3b mixtral-8x7b llama4-scout; do
    for size in "$@"; do
      for routing in balanced zipf:1.2; do
        config "a2a${gpus}-$model-t${size%%:*}-${routing/:/}" "$gpus" alltoall "$model" "${size%%:*}" "${size##*:}" \
          "$routing" regular,farskip,farskip-ce
      done
    done
  done
}

allreduce() {  # allreduce GPUS MODELS...: TP=EP prefill, 8192 tokens, seq 8192
  local gpus=$1
  shift
  for model in "$@"; do
    config "ar$gpus-$model-t8192" "$gpus" allreduce "$model" 8192 8192 balanced regular,farskip
  done
}

case $matrix in
  x4)
    alltoall_sizes 4 2048:2048 16384:4096
    allreduce 4 qwen3-30b-a3b mixtral-8x7b ;;
  x4-small) alltoall_sizes 4 2048:2048 ;;
  x4-large) alltoall_sizes 4 16384:4096 ;;
  x4-ar) allreduce 4 qwen3-30b-a3b mixtral-8x7b ;;
  x8-small) alltoall_sizes 8 2048:2048 ;;
  x8-large) alltoall_sizes 8 16384:4096 ;;
  x8-ar) allreduce 8 qwen3-30b-a3b mixtral-8x7b llama4-scout ;;
  x2)
    for model in qwen3-30b-a3b mixtral-8x7b; do
      for routing in balanced zipf:1.2; do
        config "a2a2-$model-t8192-${routing/:/}" 2 alltoall "$model" 8192 4096 "$routing" regular,farskip,farskip-ce
      done
    done
    config "ar2-qwen3-30b-a3b-t8192" 2 allreduce qwen3-30b-a3b 8192 8192 balanced regular,farskip ;;
  x4-profile | x8-profile)
    extra="$extra --op-profile on"
    gpus=${matrix:1:1}
    for model in qwen3-30b-a3b mixtral-8x7b; do
      config "a2a$gpus-$model-t2048-balanced" "$gpus" alltoall "$model" 2048 2048 balanced regular,farskip,farskip-ce
      config "a2a$gpus-$model-t16384-balanced" "$gpus" alltoall "$model" 16384 4096 balanced regular,farskip,farskip-ce
    done ;;
  x4-order)
    # The same configs timed with each pass order, side by side in one lease: what the order moves.
    base_extra=$extra
    for model in mixtral-8x7b qwen3-30b-a3b; do
      for size in 2048:2048 16384:4096; do
        for order in blocked interleaved; do
          extra="$base_extra --pass-order $order"
          config "$order-a2a4-$model-t${size%%:*}-balanced" 4 alltoall "$model" "${size%%:*}" "${size##*:}" balanced \
            regular,farskip,farskip-ce
        done
      done
    done ;;
  x4-experts)
    # One GEMM per expert (the runner's default) against cuBLAS grouped GEMMs, side by side in one lease.
    base_extra=$extra
    for model in qwen3-30b-a3b mixtral-8x7b; do
      for experts in loop grouped; do
        extra="$base_extra --experts $experts"
        config "$experts-a2a4-$model-t2048-balanced" 4 alltoall "$model" 2048 2048 balanced regular,farskip,farskip-ce
      done
    done ;;
  x1 | x1-profile)
    [[ $matrix == x1-profile ]] && extra="$extra --op-profile on"
    for model in qwen3-30b-a3b mixtral-8x7b llama4-scout; do
      config "ep1-$model-t2048" 1 alltoall "$model" 2048 2048 balanced regular
      config "ep1-$model-t16384" 1 alltoall "$model" 16384 4096 balanced regular
    done ;;
  *)
    echo "unknown matrix $matrix (x4, x4-small, x4-large, x4-ar, x8-small, x8-large, x8-ar, x8-profile, x2, x1, x1-profile, x4-profile, x4-order, x4-experts)" | tee -a "$work/summary.txt"
    exit 2 ;;
esac
pack
echo "=== done in $((SECONDS - start)) s; results in $out_dir/$label.tar.gz"
