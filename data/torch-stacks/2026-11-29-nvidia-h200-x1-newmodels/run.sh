#!/bin/bash
# The device call that made this folder (run from the repository root; OUT is the call's output folder).
# STYLES and BUDGET_S come from the caller: the transformers styles in one call, moesim's own in the next.
set -u
HERE=data/torch-stacks/2026-11-29-nvidia-h200-x1-newmodels
D=$OUT/nm
mkdir -p "$D/models"
cp "$HERE"/models/*.json "$D/models/"
nvidia-smi -q -d CLOCK,PERFORMANCE > "$D/system-$1.txt" 2>&1
cd kernels && export PYTHONPATH=.
start=$SECONDS
for st in $STYLES; do for m in olmoe-1b-7b qwen1.5-moe-a2.7b; do for ph in forward train; do
  for tk in "2048 2048" "8192 4096"; do
    set -- $tk
    if (( SECONDS - start > BUDGET_S )); then echo "skipped $m $st $ph $1: budget" >> "$D/summary.txt"; continue; fi
    trace=0; [[ $ph == train && $1 == 2048 ]] && trace=1
    python3 -m torch_stacks.run --model $m --specs "$D/models" --style $st --phase $ph --tokens $1 --seq $2 \
      --layers 2 --trace-iters $trace --out "$D/ep1" >> "$D/run.log" 2>&1
    tail -n 3 "$D/run.log" | grep -E " ok | failed " >> "$D/summary.txt"
  done
done; done; done
