#!/usr/bin/env bash
# Pipeline bubble of Megatron's 1F1B and interleaved schedules for Qwen3-30B-A3B on 16 H100 (TP1 PP2 EP8,
# the Megatron-Bridge layout), against the closed forms (p - 1)/(m + p - 1) and (p - 1)/(V m + p - 1)
# (Narayanan et al., SC'21, §2.2), and the step's tokens/s/GPU with ZeRO-1 at 64 micro-batches.
# Usage: bubble.sh [path/to/moesim]   (default: build-dev/app/moesim)
set -euo pipefail
moesim=${1:-build-dev/app/moesim}
setting=(--model qwen3-30b-a3b --hw h100 --phase train --ep 8 --pp 2 --mbs 1 --seq 4096)

step_value() {  # the "step" figure group's value $1 of a simulation with the remaining flags
  local name=$1
  shift
  "$moesim" simulate "${setting[@]}" "$@" --json - |
    sed -n "s/^ *\"$name\": *\([-0-9.e+]*\),*$/\1/p" | head -1
}

echo "# Qwen3-30B-A3B training on 2 x 8 H100, TP1 PP2 EP8, MBS 1, seq 4096: pipeline bubble (% of the step)"
echo "# closed form: 1f1b (p - 1)/(m + p - 1), interleaved (p - 1)/(V m + p - 1); moesim adds the stages'"
echo "# point-to-point transfers and whatever makes chunks unequal"
printf '# %-12s %3s %4s %10s %10s\n' schedule V m moesim "closed form"
for m in 2 4 8 16; do
  b=$(step_value bubble_pct --micro-batches "$m")
  printf '  %-12s %3s %4s %10.2f %10.2f\n' 1f1b 1 "$m" "$b" "$(awk -v m="$m" 'BEGIN { print 100 / (m + 1) }')"
  b=$(step_value bubble_pct --micro-batches "$m" --pp-schedule interleaved --vpp 2)
  printf '  %-12s %3s %4s %10.2f %10.2f\n' interleaved 2 "$m" "$b" "$(awk -v m="$m" 'BEGIN { print 100 / (2 * m + 1) }')"
done
echo "#"
echo "# Megatron-Bridge (DGX-H100, GBS 512 = 64 micro-batches per pipeline): 10,494 tokens/s/GPU published"
t=$(step_value tokens_per_s_per_gpu --micro-batches 64 --optimizer zero1)
printf '  tokens/s/GPU %.0f  (%+.1f%% against the published figure)\n' "$t" "$(awk -v t="$t" 'BEGIN { print 100 * (t / 10494 - 1) }')"
