#!/usr/bin/env bash
# Two transformers MoE models moesim was not built around, each with its grouped_mm and its eager experts: one
# traced training step (T 2048, L 1) and seven untraced configurations each, as torch_stacks records in OUT.
# Usage (repository root, a CUDA machine with transformers): bash data/calibration/<this folder>/run.sh OUT [MODEL_TYPE]
# (MODEL_TYPE olmoe or qwen2_moe: that model only)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
cp "$here"/*.json "$out"/
timed=2048:2:train,2048:2:forward,4096:2:train,4096:2:forward,2048:4:train,2048:4:forward,8192:2:forward
olmoe='{"hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16,
        "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 256}'
qwen='{"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
       "shared_expert_intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 16,
       "num_experts": 60, "num_experts_per_tok": 4, "vocab_size": 256}'
only=${2:-}
run() {  # MODEL_TYPE SPEC CONFIG EXPERTS
  [ -z "$only" ] || [ "$only" = "$1" ] || return 0
  local dir="$out/${2%.json}-$4"
  python3 kernels/tools/trace_transformers_model.py --model-type "$1" --model-spec "$out/$2" --config "$3" \
    --experts "$4" --trace 2048:1:train --time "$timed" --out "$dir" > "$dir.log" 2>&1 || echo "FAILED: $dir" >> "$dir.log"
  tail -n 3 "$dir.log"
}
run olmoe olmoe-1b-7b.json "$olmoe" grouped_mm
run olmoe olmoe-1b-7b.json "$olmoe" eager
run qwen2_moe qwen1.5-moe-a2.7b.json "$qwen" grouped_mm
run qwen2_moe qwen1.5-moe-a2.7b.json "$qwen" eager
