#!/bin/bash
# The second device call of this folder: DeepSeek's MLA attention (transformers' deepseek_v2), traced plain and with
# moesim's ranges, DeepSeek-V2-Lite (no q LoRA) and DeepSeek-V2 (q LoRA: two latent norms). OUT is the call's output.
set -u
D=$OUT/mla
mkdir -p "$D/plain" "$D/annotated"
cd kernels && export PYTHONPATH=.
for m in deepseek-v2-lite deepseek-v2; do
  for sub in plain annotated; do
    flag=(); [[ $sub == plain ]] && flag=(--plain-trace)
    python3 -m torch_stacks.run --model $m --style hf-grouped_mm --phase train --tokens 2048 --seq 2048 --layers 2 \
      --trace-iters 1 "${flag[@]}" --out "$D/$sub" >> "$D/run.log" 2>&1
    tail -n 3 "$D/run.log" | grep -E " ok | failed |traced|not traced" >> "$D/summary.txt"
  done
done
