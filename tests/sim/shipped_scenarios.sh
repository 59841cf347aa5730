#!/usr/bin/env bash
# Runs every shipped scenario (the quickstart, the examples, the CLI test's scenarios, validate's published
# and measured configurations, and per-rank multi-node runs) and writes each output file into OUT_DIR.
#
#   shipped_scenarios.sh MOESIM OUT_DIR                 # one set of outputs
#   shipped_scenarios.sh --compare MOESIM_A MOESIM_B DIR  # both binaries, then every output compared byte for byte
#   shipped_scenarios.sh --modes MOESIM DIR             # the incremental max-min against a full solve per change
#                                                       # (MOESIM_MAXMIN=from-scratch), plus a checked run
# The sweeps run with --jobs 1 so that their logs are in point order either way.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

run_all() {  # moesim out_dir
  local moesim=$1 out=$2
  rm -rf "$out"
  mkdir -p "$out"
  local n=0
  sim() {  # name args...: a simulate run with its JSON, trace and stdout
    local name=$1
    shift
    "$moesim" simulate "$@" --json "$out/$name.json" --trace "$out/$name.trace.json" > "$out/$name.txt"
    n=$((n + 1))
  }
  sim quickstart --model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 8 --seq 4096 --schedule farskip \
    --compare regular
  "$moesim" simulate --model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 8 --seq 4096 \
    --schedule farskip --compare regular --report "$out/quickstart-report" > /dev/null
  sim cli-base --model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 1 --seq 4096 --layers 2 \
    --schedule farskip --compare regular
  sim cli-uniform --model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 1 --seq 4096 --layers 2 \
    --schedule farskip --routing uniform --seed 7
  local fm=(--model flashmoe-eval --hw h100 --phase forward --capacity-factor 1.0)
  sim flashmoe-megakernel-jitter "${fm[@]}" --ep 2 --tokens 1024 --seq 1024 --schedule megakernel \
    --jitter table2-vm --repeat 4
  for s in megakernel megatron-te megatron-cutlass fastermoe; do
    local dtype=fp16
    [[ $s == megakernel ]] && dtype=fp32
    sim "flashmoe-$s" "${fm[@]}" --ep 8 --tokens 4096 --seq 4096 --dtype "$dtype" --schedule "$s"
  done
  sim flashmoe-megakernel-op-jitter "${fm[@]}" --ep 8 --tokens 4096 --seq 4096 --dtype fp32 --schedule megakernel \
    --jitter op:5,20 --repeat 4
  local fold=(--model gpt-moe-m --hw a10g --nodes 2 --ep 16 --tp 8 --phase train --mbs 1 --dtype fp16
    --capacity-factor 1.0)
  sim foldmoe-megatron "${fold[@]}" --seq 4096 --schedule megatron
  sim foldmoe-1a1m-uniform "${fold[@]}" --seq 8192 --schedule 1a1m-uniform --degree 4
  sim foldmoe-tutel-auto "${fold[@]}" --seq 4096 --schedule tutel
  # Per-rank, several nodes, skewed routing; copy-engine all-to-alls; a power-capped H200.
  sim dsv3-ep16-zipf --model deepseek-v3 --hw h100 --phase train --ep 16 --nodes 2 --routing zipf:1.1 \
    --tokens 4096 --seq 4096 --layers 6 --schedule farskip --compare regular
  sim dsv3-ep32-zipf-fwd --model deepseek-v3 --hw h100 --phase forward --ep 32 --nodes 4 --routing zipf:1.1 \
    --tokens 2048 --seq 2048 --layers 5 --schedule regular
  sim qwen3-ce --model qwen3-30b-a3b --hw h200 --phase train --ep 4 --tokens 2048 --seq 2048 --layers 4 \
    --routing zipf:1.2 --schedule farskip --opt transport=copy_engine --compare regular
  sim qwen3-balanced-perrank --model qwen3-30b-a3b --hw h200 --phase train --ep 8 --tokens 4096 --seq 4096 \
    --layers 4 --per-rank --schedule farskip
  sim mixtral-allreduce-prefill --model mixtral-8x7b --hw mi300x --phase prefill --moe-comm allreduce --ep 8 \
    --tp 8 --mbs 4 --seq 2048 --layers 4 --schedule farskip --compare regular
  for example in farskip-ep-scaling-dsv3 farskip-prefill-ttft foldmoe-degree-sweep; do
    "$moesim" sweep "$root/examples/$example/sweep.json" --jobs 1 --out "$out/sweep-$example.csv" > /dev/null
    n=$((n + 1))
  done
  # The published rows include whole 256-GPU steps: seconds incrementally, many minutes with a full solve per
  # change, so --modes leaves them out (MOESIM_SKIP_PUBLISHED=1); the scenarios above cover the same code.
  if [[ -z ${MOESIM_SKIP_PUBLISHED:-} ]]; then
    "$moesim" validate --published --json "$out/validate-published.json" > "$out/validate-published.txt"
  fi
  local measured=()
  while IFS= read -r f; do measured+=("$f"); done < <(find "$root/data/layer-runs" -name '*.json' | sort)
  "$moesim" validate --measured "${measured[@]}" --json "$out/validate-measured.json" > "$out/validate-measured.txt"
  echo "# $n scenario runs plus validate --published and --measured (${#measured[@]} records) into $out"
}

compare_dirs() {  # a b [moesim_a moesim_b]
  local a=$1 b=$2 moesim_a=${3:-MOESIM} moesim_b=${4:-MOESIM} bad=0 files=0
  while IFS= read -r f; do
    files=$((files + 1))
    # A result record echoes its command line (the binary and output paths differ between the runs) and the
    # build's git SHA.
    if ! cmp -s <(sed "s#$a#DIR#g; s#$moesim_a#MOESIM#g; /\"git_sha\"/d" "$a/$f") \
      <(sed "s#$b#DIR#g; s#$moesim_b#MOESIM#g; /\"git_sha\"/d" "$b/$f"); then
      echo "DIFFERS: $f"
      bad=1
    fi
  done < <(cd "$a" && find . -type f | sort)
  echo "# $files output files compared"
  return $bad
}

case ${1:-} in
  --compare)
    run_all "$2" "$4/a"
    run_all "$3" "$4/b"
    compare_dirs "$4/a" "$4/b" "$2" "$3"
    ;;
  --modes)
    export MOESIM_SKIP_PUBLISHED=1
    MOESIM_MAXMIN=checked run_all "$2" "$3/checked"
    MOESIM_MAXMIN=from-scratch run_all "$2" "$3/from-scratch"
    run_all "$2" "$3/incremental"
    compare_dirs "$3/from-scratch" "$3/incremental"
    compare_dirs "$3/checked" "$3/incremental"
    ;;
  *)
    run_all "$1" "$2"
    ;;
esac
