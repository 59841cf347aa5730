#!/bin/bash
# FlashMoE §4 setting on 8xH100 (one MoE layer forward, H = I = 2048, top-2, capacity 1.0):
# predicted latency, throughput, SM utilization and overlap efficiency next to the paper's numbers.
# Usage: examples/flashmoe-eval/run.sh [--quick] [path/to/moesim]
#   --quick  Figures 8 and 10-11 only, what CTest runs (examples.flashmoe-eval); Figure 12's megakernel
#            points and Table 2's 32-seed jitter runs take most of the full script's minutes.
set -euo pipefail
quick=0
if [[ ${1:-} == --quick ]]; then
  quick=1
  shift
fi
moesim=${1:-build/app/moesim}
model=flashmoe-eval
run() {  # schedule gpus experts tokens [extra flags...] -> "layer_ms tokens_per_s sm_util_pct kernels p50 p95"
  local sched=$1 gpus=$2 experts=$3 tokens=$4
  shift 4
  local dtype=fp16
  local math=()
  # §4: FlashMoE runs FP32 (fp32 tokens, TF32 tensor-core tiles), every baseline FP16
  [ "$sched" = megakernel ] && dtype=fp32 && math=(--opt math=tf32)
  local spec
  spec=$(mktemp)
  sed "s/\"experts\": 64/\"experts\": $experts/" "$(dirname "$0")/../../models/specs/$model.json" > "$spec"
  "$moesim" simulate --model "$spec" --hw h100 --schedule "$sched" --phase forward --ep "$gpus" \
    --tokens "$tokens" --seq "$tokens" --dtype "$dtype" --capacity-factor 1.0 "${math[@]}" "$@" --json - |
    python3 -c 'import json,sys; d=json.load(sys.stdin); n=d.get("noise",{}); f=d.get("flashmoe",{})
print(d["layer_ms"], d["tokens_per_s"], d["sm_util_pct"], f.get("kernels_per_rank",0), n.get("layer_ms_p50",d["layer_ms"]), n.get("layer_ms_p95",d["layer_ms"]))'
  rm -f "$spec"
}
baselines="megatron-te megatron-cutlass fastermoe"

figure8() {
  echo "# Figure 8: forward latency (ms) vs tokens per GPU, 8 GPUs, 64 experts"
  printf "# %-18s %10s %10s %10s\n" schedule 4096 8192 16384
  for s in megakernel $baselines; do
    row=""
    for t in 4096 8192 16384; do row="$row $(run $s 8 64 $t | awk '{printf "%10.3f", $1}')"; done
    printf "  %-18s%s\n" "$s" "$row"
  done
}

figure12() {
  echo "# Figure 12: forward latency (ms) vs experts, 8 GPUs, 16K tokens per GPU"
  printf "# %-18s %10s %10s %10s %10s %10s\n" schedule 8 16 32 64 128
  for s in megakernel $baselines; do
    row=""
    for e in 8 16 32 64 128; do row="$row $(run $s 8 $e 16384 | awk '{printf "%10.3f", $1}')"; done
    printf "  %-18s%s\n" "$s" "$row"
  done
}

figures10_11() {
  echo "# Figures 10-11: throughput (MTokens/s) and overlap efficiency O_e = T(2)/T(N), 16K tokens per GPU, 64 experts"
  printf "# %-18s %8s %8s %8s %8s %8s %8s %8s\n" schedule tput@2 tput@4 tput@8 Oe@4 Oe@8 SMutil@8 ops@8
  for s in megakernel $baselines; do
    read -r t2 p2 _ _ _ _ < <(run $s 2 64 16384)
    read -r t4 p4 _ _ _ _ < <(run $s 4 64 16384)
    read -r t8 p8 u8 k8 _ _ < <(run $s 8 64 16384)
    awk -v s=$s -v t2=$t2 -v t4=$t4 -v t8=$t8 -v p2=$p2 -v p4=$p4 -v p8=$p8 -v u8=$u8 -v k8=$k8 \
      'BEGIN{printf "  %-18s %8.2f %8.2f %8.2f %8.3f %8.3f %8.1f %8d\n", s, p2/1e6, p4/1e6, p8/1e6, t2/t4, t2/t8, u8, k8}'
  done
}

table2() {
  echo "# Table 2 stragglers (per-GPU start delays) and per-launch jitter (op:5,20 us, an estimate):"
  echo "# layer p50/p95 (ms) over 32 runs, 8 GPUs, 16K tokens, 64 experts; quiet = no jitter"
  printf "# %-18s %10s %10s %10s %10s %10s %10s %10s\n" schedule quiet hpc.p50 hpc.p95 vm.p50 vm.p95 op.p50 op.p95
  for s in megakernel megatron-te; do
    read -r q _ _ _ _ _ < <(run $s 8 64 16384)
    read -r _ _ _ _ h50 h95 < <(run $s 8 64 16384 --jitter table2-hpc --repeat 32)
    read -r _ _ _ _ v50 v95 < <(run $s 8 64 16384 --jitter table2-vm --repeat 32)
    read -r _ _ _ _ o50 o95 < <(run $s 8 64 16384 --jitter op:5,20 --repeat 32)
    printf "  %-18s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n" "$s" "$q" "$h50" "$h95" "$v50" "$v95" "$o50" "$o95"
  done
}

figure8
((quick)) || figure12
figures10_11
((quick)) || table2
