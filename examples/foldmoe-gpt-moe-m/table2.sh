#!/usr/bin/env bash
# FoldMoE paper Table 2 / Figure 8 for GPT-MoE-M: moesim's per-block latency of Megatron-MoE, Tutel and
# FoldMoE (1a1m-uniform) at d = 2, 4, 8, 16 and seq 4K..32K, next to the published numbers.
# Usage: table2.sh [path/to/moesim]   (default: build/app/moesim)
set -euo pipefail
moesim=${1:-build/app/moesim}
# §5.1: 2 x g5.48xlarge (8 A10G each), DP 2 across nodes, TP+SP 8 inside a node, EP 16, top-1, capacity
# factor 1.0, fp16 (App. C), training (forward + backward). The paper does not give its batch size: one
# sequence per TP group here.
setting=(--model gpt-moe-m --hw a10g --nodes 2 --ep 16 --tp 8 --phase train --mbs 1 --dtype fp16
         --capacity-factor 1.0)

layer_ms() {
  "$moesim" simulate "${setting[@]}" "$@" --json - | sed -n 's/^ *"layer_ms": *\([-0-9.e+]*\),*$/\1/p'
}

# Table 2, GPT-MoE-M (ms per block): Megatron-MoE, then FoldMoE and Tutel at d = 2 4 8 16.
declare -A megatron=([4096]=361.86 [8192]=935.77 [16384]=2749.70 [32768]=5787.19)
declare -A published=(
  [foldmoe.4096]="363.94 322.06 516.52 1225.78"    [tutel.4096]="441.06 427.28 446.73 468.61"
  [foldmoe.8192]="597.94 572.44 710.68 1037.50"    [tutel.8192]="569.65 1695.62 1020.66 892.82"
  [foldmoe.16384]="1331.96 1189.83 1209.73 1321.54" [tutel.16384]="1774.98 4209.27 2230.82 2640.12"
  [foldmoe.32768]="2130.07 2998.03 2765.12 2540.53" [tutel.32768]="2483.79 5478.15 8120.67 6677.55")
degrees=(2 4 8 16)

echo "# FoldMoE Table 2: GPT-MoE-M per-block latency on 2 x 8 A10G (DP 2, TP+SP 8, EP 16), train, fp16"
echo "# speedup = Megatron-MoE latency / this latency, for moesim and for the paper separately"
printf '# %6s %-9s %3s %12s %12s %10s %10s\n' seq system d predicted published speedup speedup
printf '# %6s %-9s %3s %12s %12s %10s %10s\n' "" "" "" "(ms)" "(ms)" "(moesim)" "(paper)"
declare -A best_pred best_pub
for seq in 4096 8192 16384 32768; do
  base=$(layer_ms --schedule megatron --seq "$seq")
  printf '  %6s %-9s %3s %12.3f %12.2f %10.3f %10.3f\n' "$seq" megatron 1 "$base" "${megatron[$seq]}" 1 1
  for system in tutel foldmoe; do
    schedule=$system
    [[ $system == foldmoe ]] && schedule=1a1m-uniform
    read -r -a pub <<<"${published[$system.$seq]}"
    for i in "${!degrees[@]}"; do
      d=${degrees[$i]}
      ms=$(layer_ms --schedule "$schedule" --degree "$d" --seq "$seq")
      read -r sp_pred sp_pub < <(awk -v b="$base" -v m="$ms" -v B="${megatron[$seq]}" -v P="${pub[$i]}" \
        'BEGIN { printf "%.6f %.6f\n", b / m, B / P }')
      printf '  %6s %-9s %3s %12.3f %12.2f %10.3f %10.3f\n' "$seq" "$system" "$d" "$ms" "${pub[$i]}" \
        "$sp_pred" "$sp_pub"
      best_pred[$system.$seq]=$(awk -v a="${best_pred[$system.$seq]:-0}" -v b="$sp_pred" 'BEGIN { print (b > a ? b : a) }')
      best_pub[$system.$seq]=$(awk -v a="${best_pub[$system.$seq]:-0}" -v b="$sp_pub" 'BEGIN { print (b > a ? b : a) }')
    done
  done
done
echo "#"
echo "# best d per system (the paper's search over d = 2..16): speedup over Megatron-MoE"
printf '# %6s %-9s %10s %10s %8s\n' seq system moesim paper error
printf '# %6s %-9s %10s %10s %8s\n' "" "" "(x)" "(x)" "(%)"
for seq in 4096 8192 16384 32768; do
  for system in tutel foldmoe; do
    awk -v s="$seq" -v n="$system" -v p="${best_pred[$system.$seq]}" -v q="${best_pub[$system.$seq]}" \
      'BEGIN { printf "  %6s %-9s %10.3f %10.3f %+8.1f\n", s, n, p, q, 100 * (p - q) / q }'
  done
done
