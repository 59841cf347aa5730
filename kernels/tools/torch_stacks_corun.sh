#!/usr/bin/env bash
# How much a rank's host issue slows while other processes of the host issue too: the same EP 1 stack
# (kernels/torch_stacks, Qwen3-30B-A3B, 2 layers, 2048 tokens, forward) timed alone on GPU 0, and while GPUs 1-3
# each loop a stack of their own (independent processes, no process group: nothing waits for anyone), for both
# the measured and the loading stack's style; then the same stacks at EP 4 (torchrun, 4 ranks) on the host.
#
#   kernels/tools/torch_stacks_corun.sh OUT_DIR [REPEATS]
#
# Each run writes its torch_stacks record (issue_ms, gpu_ms per rank) under OUT_DIR/<run>/.
set -u
out=$(realpath -m "$1")
repeats=${2:-2}
mkdir -p "$out"
cd "$(dirname "$0")/.."  # kernels/
config=(--model qwen3-30b-a3b --tokens 2048 --seq 2048 --layers 2 --phase forward)
measure() {  # run-name style
  CUDA_VISIBLE_DEVICES=0 python3 -m torch_stacks.run "${config[@]}" --style "$2" --warmup 5 --iters 30 \
    --out "$out/$1" > "$out/$1.log" 2>&1
}
for rep in $(seq 1 "$repeats"); do
  for style in grouped loop; do measure "solo$rep-$style" "$style"; done
  for load in grouped loop; do
    pids=()
    for gpu in 1 2 3; do
      CUDA_VISIBLE_DEVICES=$gpu python3 -m torch_stacks.run "${config[@]}" --style "$load" --warmup 5 \
        --iters 1000000 --out "$out/loader" > /dev/null 2>&1 &
      pids+=($!)
    done
    sleep 25  # the loaders have built their stacks and are in their timed loop
    for style in grouped loop; do measure "under-$load$rep-$style" "$style"; done
    kill "${pids[@]}" 2> /dev/null
    wait
  done
done
for style in grouped loop; do
  torchrun --nproc-per-node 4 -m torch_stacks.run "${config[@]}" --style "$style" --warmup 5 --iters 30 \
    --out "$out/ep4-$style" > "$out/ep4-$style.log" 2>&1
done
rm -rf "$out/loader"
