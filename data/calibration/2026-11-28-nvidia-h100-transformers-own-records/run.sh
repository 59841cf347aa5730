#!/usr/bin/env bash
# Two transformers MoE models moesim was not built around, each with its grouped_mm and its eager experts: one
# traced training step (T 2048, L 1) and seven untraced configurations each, as torch_stacks records in OUT; and
# (asked for by name) DeepSeek-V2-Lite with its first layer dense, grouped_mm, traced at L 2 (the dense layer and
# an MoE layer).
# Usage (repository root, a CUDA machine with transformers): bash data/calibration/<this folder>/run.sh OUT [MODEL_TYPE]
# (MODEL_TYPE olmoe, qwen2_moe or deepseek_v2: that model only; none: olmoe and qwen2_moe)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
cp "$here"/*.json "$here"/lease-a/*.json "$out"/  # the model specs, as a user writes them
timed=2048:2:train,2048:2:forward,4096:2:train,4096:2:forward,2048:4:train,2048:4:forward,8192:2:forward
olmoe='{"hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16,
        "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 256}'
qwen='{"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
       "shared_expert_intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 16,
       "num_experts": 60, "num_experts_per_tok": 4, "vocab_size": 256}'
only=${2:-}
dsv2='{"hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64,
       "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "num_attention_heads": 16,
       "num_key_value_heads": 16, "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
       "qk_rope_head_dim": 64, "v_head_dim": 128, "head_dim": 64, "topk_method": "greedy", "n_group": 1,
       "topk_group": 1, "vocab_size": 256}'
run() {  # MODEL_TYPE SPEC CONFIG EXPERTS [TRACED [TIMED]]
  if [ -z "$only" ]; then [ "$1" != deepseek_v2 ] || return 0; else [ "$only" = "$1" ] || return 0; fi
  local dir="$out/${2%.json}-$4"
  python3 kernels/tools/trace_transformers_model.py --model-type "$1" --model-spec "$out/$2" --config "$3" \
    --experts "$4" --trace "${5:-2048:1:train}" --time "${6:-$timed}" --out "$dir" > "$dir.log" 2>&1 \
    || echo "FAILED: $dir" >> "$dir.log"
  tail -n 3 "$dir.log"
}
run olmoe olmoe-1b-7b.json "$olmoe" grouped_mm
run olmoe olmoe-1b-7b.json "$olmoe" eager
run qwen2_moe qwen1.5-moe-a2.7b.json "$qwen" grouped_mm
run qwen2_moe qwen1.5-moe-a2.7b.json "$qwen" eager
run deepseek_v2 deepseek-v2-lite.json "$dsv2" grouped_mm 2048:2:train \
  2048:2:forward,4096:2:train,4096:2:forward,2048:4:train,2048:4:forward,8192:2:forward
