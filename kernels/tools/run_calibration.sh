#!/usr/bin/env bash
# Builds kernels/ on a GPU node and runs the chosen suites; everything lands in OUT_DIR.
#
#   kernels/tools/run_calibration.sh OUT_DIR LABEL SUITE...
#   SUITE: any suite of kernels/tools/bench_suites.tsv (gemm grouped_gemm attention memory launch persistent
#          power layer; collectives and contention with the GPU count appended: collectives4), or one of
#          gemm_first grouped_gemm_models attention torch_sdpa memory launch persistent persistent2
#          collectives2 collectives4 collectives8 contention1 contention2 contention4 contention8 contention4_priority
#          contention4_layer (short kernels of the layer runner's size beside 8 and 32 MiB collectives:
#          a 24 us add and the causal softmax over 32 MiB, an 8192x1536x2048 GEMM; NCCL default CTAs)
#          contention4_sizes (GEMMs of 5 us to 1.2 ms, M x 1536 x 2048 from under one wave to 12 waves and
#          8192x4096x7168, and adds over 4 and 256 MiB, beside 32 and 256 MiB collectives, default and
#          8 CTAs: how the slowdown beside NCCL depends on the kernel's length and waves)
#          contention4_router (the runner's RMSNorm, plain and with 1 fused input, and router top-k at the
#          three models' shapes, 2048-16384 tokens, alone and beside 32 MiB NCCL collectives)
#          router1 (the same RMSNorm and top-k on one GPU, alone and beside a 32 MiB peer copy: the router
#          table where no NCCL node is at hand)
#          gemm_attn (the attention projections at 512-8192 tokens, the heuristic's first pick: the rows below
#          gemm_first's 4096)
#          tile_gemm (FlashMoE's GEMM tile task, tf32 and bf16: its persistent grid over one expert GEMM of
#          128-16384 tokens x 2048 x 2048, and 1 and 2 blocks per SM at 8 tasks each; ~20 s; also
#          tile_gemm_sass.txt, the HMMA/LDGSTS/LDSM instructions cuobjdump finds in the program)
#          power power4 (sustained-load board power and SM clock)
#          power_overlap (one GPU, ~50 s: an 8192^3 GEMM beside an SM-driven copy of 20 and 8 CTAs against the
#          two alone, at 10 ms bursts: does a GEMM beside NCCL-like CTAs draw more power per unit of work; and
#          the GEMM at full, 0.95 and 0.9 duty with 1, 10 and 30 ms bursts: how the burst length moves power
#          and clock near full duty; three runs: power_overlap_b10, power_overlap_b1, power_overlap_b30)
#          collectives_hot2 collectives_hot4 collectives_hot8 (NCCL and copy-engine all-to-all with rank 0
#          receiving / sending twice an even share, beside the even ones: where an uneven all-to-all binds)
#          nccl_info4 nccl_info8 (NCCL_DEBUG=INFO init log: channels)
#          torch_collectives4 torch_collectives8 (after collectives4 / collectives8)
#          torch_gemm (after gemm)   gemm_check (3 alternating rounds of gemm + torch_gemm,
#          compared best-of-rounds: unlocked clocks move one GEMM's rate by up to ~10%)
#          gemm_models (every GEMM the simulator emits for a layer of every shipped model,
#          tools/model_gemm_shapes.json: 4096-token projections, routed experts at 256/1024/4096 rows; each
#          product timed through cuBLASLt's pick and cublasGemmEx, the faster kept; ~2 min)
#          torch_gemm_models (after gemm_models: torch.matmul on the same products, ratios per shape, model and
#          kind of GEMM)
#          (the digit = GPUs)
#
# Writes WORK/LABEL/{system.txt, build.log, summary.txt, <suite>.log, <suite>.json} (WORK =
# $MOESIM_WORK_DIR or /tmp/moesim-calibration), packs it into OUT_DIR/LABEL.tar.gz, and prints the
# end of each log. MOESIM_GIT_SHA names the source revision; MOESIM_SUITE_TIMEOUT caps each suite (s);
# MOESIM_KERNELS_TARGETS (e.g. "gemm_bench tile_gemm_bench") builds only those programs.
set -u
out_dir=$1 label=$2
shift 2
repo=$(cd "$(dirname "$0")/../.." && pwd)
work_root=${MOESIM_WORK_DIR:-/tmp/moesim-calibration}
work=$work_root/$label
mkdir -p "$work" "$out_dir"
. "$repo/kernels/tools/gpu_build_env.sh"  # NCCL_NVLS_ENABLE=0 etc., NCCL discovery, build

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi
  nvidia-smi topo -m
  nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "gpus", torch.cuda.device_count())'
  ls /usr/local/cuda/include | grep -E '^(nccl|cudnn|cublasLt)' ; ls /usr/local/cuda/lib64 | grep -E 'nccl|cublasLt'
} > "$work/system.txt" 2>&1

moesim_find_nccl_root
echo "NCCL_ROOT=${nccl_root:-<toolkit>}" >> "$work/system.txt"
build=$repo/build-kernels
: > "$work/build.log"
# shellcheck disable=SC2086  # a list of targets
moesim_build_kernels "$repo" "$build" "$work/build.log" ${MOESIM_KERNELS_TARGETS:-} || tail -40 "$work/build.log"

run() {  # run NAME COMMAND...: log + JSON per suite, never stops the script
  local name=$1
  shift
  echo "=== $name: $*" | tee -a "$work/summary.txt"
  local start=$SECONDS
  timeout "${MOESIM_SUITE_TIMEOUT:-240}" "$@" -J "$work/$name.json" > "$work/$name.log" 2>&1
  echo "=== $name: exit $? in $((SECONDS - start)) s" | tee -a "$work/summary.txt"
  pack
}

torch_gemm() {  # NAME GEMM_JSON: torch.matmul on the bf16 shapes of a gemm_bench result, ours/torch per shape
  local name=$1 source=$2
  echo "=== $name" | tee -a "$work/summary.txt"
  timeout "${MOESIM_SUITE_TIMEOUT:-240}" python3 "$repo/kernels/tools/torch_gemm_compare.py" "$source" \
    --json "$work/$name.json" > "$work/$name.log" 2>&1
  echo "=== $name: exit $?" | tee -a "$work/summary.txt"
}

table_suite() {  # SUITE[N]: the steps of kernels/tools/bench_suites.tsv (shared with `moesim bench`); N = GPUs
  local name=${1%%[0-9]*} gpus=${1#"${1%%[0-9]*}"} found=1 step program scope args
  [[ -n $gpus ]] || gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || echo 1)
  while read -r suite step program scope args; do
    [[ $suite == "$name" ]] || continue
    found=0
    # shellcheck disable=SC2086  # ARGS is a list of options
    if [[ $scope == all && $gpus -lt 2 ]]; then echo "=== $step: skipped (one GPU)" | tee -a "$work/summary.txt"
    elif [[ $scope == all ]]; then run "${step}${1#"$name"}" "$build/$program" -g "$gpus" $args
    else run "$step" "$build/$program" $args; fi
  done < <(grep -v '^#' "$repo/kernels/tools/bench_suites.tsv")
  return $found
}

pack() {  # after every suite, so a run cut short still returns what finished
  tar -czf "$out_dir/$label.tar.gz" -C "$work_root" "$label"
  cp "$work/summary.txt" "$out_dir/$label-summary.txt"
}

for suite in "$@"; do
  case $suite in
    power4) run power4 "$build/power_bench" -g 4 --loads idle,gemm:8192:8192:8192,gemm:4096:28672:4096,copy,peer,peer:0.5,gemm:8192:8192:8192:0.5 ;;
    power_overlap)  # 7 + 3 + 2 loads of ~3 s (0.5 s rest + 2.5 s) plus three start-ups: ~50 s on one GPU
      run power_overlap_b10 "$build/power_bench" --burst_ms 10 --loads idle,gemm:8192:8192:8192,gemm:8192:8192:8192:0.95,gemm:8192:8192:8192:0.9,smcopy:20,gemm+smcopy:8192:8192:8192:20,gemm+smcopy:8192:8192:8192:8
      run power_overlap_b1 "$build/power_bench" --burst_ms 1 --loads gemm:8192:8192:8192,gemm:8192:8192:8192:0.95,gemm:8192:8192:8192:0.9
      run power_overlap_b30 "$build/power_bench" --burst_ms 30 --loads gemm:8192:8192:8192,gemm:8192:8192:8192:0.95 ;;
    gemm_first) run gemm_first "$build/gemm_bench" -w 5 -n 30 -G 64 --algos 1 ;;  # the heuristic's first pick, as the layer runner uses
    grouped_gemm_models)  # the layer runner's expert shapes at its EP1/2/4 local expert counts and rows
      run grouped_gemm_qwen3 "$build/grouped_gemm_bench" -w 3 -n 20 -G 64 --ffn 768 --hidden 2048 \
        --experts 32,64,128 --tokens_per_expert 512,4096
      run grouped_gemm_mixtral "$build/grouped_gemm_bench" -w 3 -n 20 -G 64 --ffn 14336 --hidden 4096 \
        --experts 2,4,8 --tokens_per_expert 1024,8192
      run grouped_gemm_llama4 "$build/grouped_gemm_bench" -w 3 -n 20 -G 64 --ffn 8192 --hidden 5120 \
        --experts 4,8,16 --tokens_per_expert 512,4096 ;;
    persistent2) run persistent2 "$build/persistent_bench" -g 2 --parts store -w 2 -n 10 ;;
    collectives_hot2 | collectives_hot4 | collectives_hot8)
      run "$suite" "$build/collectives_bench" -g "${suite#collectives_hot}" -b 1M -e 1G -f 4 -w 5 -n 20 --hot 2 \
        --ops all_to_all,ce_all_to_all,all_to_all_hot_in,all_to_all_hot_out,ce_all_to_all_hot_in,ce_all_to_all_hot_out ;;
    contention1) run contention1 "$build/contention_bench" -g 1 --comms ce_copy -w 3 -n 30 ;;
    contention4_priority) run contention4_priority "$build/contention_bench" -g 4 -w 3 -n 30 --comm_priority ;;
    contention4_layer)
      run contention4_layer "$build/contention_bench" -g 4 -w 3 -n 30 --compute add,softmax,gemm --mem_mib 32 \
        --gemm 8192,1536,2048 --sizes_mib 8,32 --ctas 0 ;;
    contention4_sizes)
      for shape in 512,1536,2048 2048,1536,2048 2560,1536,2048 4096,1536,2048 8192,1536,2048 \
        16384,1536,2048 32768,1536,2048 8192,4096,7168; do
        run "contention4_gemm_${shape//,/x}" "$build/contention_bench" -g 4 -w 3 -n 30 --compute gemm \
          --gemm "$shape" --comms all_reduce,all_to_all --sizes_mib 32,256 --ctas 0,8
      done
      for mib in 4 256; do
        run "contention4_add_${mib}mib" "$build/contention_bench" -g 4 -w 3 -n 30 --compute add --mem_mib "$mib" \
          --comms all_reduce,all_to_all --sizes_mib 32,256 --ctas 0
      done ;;
    contention4_router)
      router() {  # NAME ARGS...: one layer kernel beside 32 MiB NCCL all_reduce / all_to_all, default CTAs
        local name=$1
        shift
        run "contention4_$name" "$build/contention_bench" -g 4 -w 3 -n 30 --comms all_reduce,all_to_all \
          --sizes_mib 32 --ctas 0 "$@"
      }
      for tokens in 2048 8192 16384; do
        router "norm_h2048_t${tokens}" --compute rmsnorm --norm_width 2048 --mem_mib $((tokens * 2048 * 2 >> 20))
        router "norm1_h2048_t${tokens}" --compute rmsnorm --norm_width 2048 --norm_inputs 1 \
          --mem_mib $((tokens * 2048 * 2 >> 20))
        router "topk_e128k8_t${tokens}" --compute topk --experts 128 --top_k 8 --tokens "$tokens"
        router "topk_e8k2_t${tokens}" --compute topk --experts 8 --top_k 2 --tokens "$tokens"
        router "topk_e16k1_t${tokens}" --compute topk --experts 16 --top_k 1 --tokens "$tokens"
      done
      router norm_h4096_t8192 --compute rmsnorm --norm_width 4096 --mem_mib 64
      router norm_h5120_t8192 --compute rmsnorm --norm_width 5120 --mem_mib 80 ;;
    nccl_info4 | nccl_info8)
      echo "=== $suite" | tee -a "$work/summary.txt"
      NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING timeout "${MOESIM_SUITE_TIMEOUT:-240}" "$build/collectives_bench" \
        -g "${suite#nccl_info}" -b 64M -e 64M --ops all_reduce,all_to_all -w 1 -n 2 > "$work/$suite.log" 2>&1
      echo "=== $suite: exit $?" | tee -a "$work/summary.txt"
      pack ;;
    torch_collectives4 | torch_collectives8)
      gpus=${suite#torch_collectives}
      echo "=== $suite" | tee -a "$work/summary.txt"
      timeout "${MOESIM_SUITE_TIMEOUT:-240}" python3 -m torch.distributed.run --standalone --nproc_per_node "$gpus" \
        "$repo/kernels/tools/torch_collectives_compare.py" --json "$work/$suite.json" > "$work/$suite.log" 2>&1
      echo "=== $suite: exit $?" | tee -a "$work/summary.txt"
      [ -f "$work/collectives$gpus.json" ] && python3 "$repo/kernels/tools/busbw_compare.py" \
        "$work/collectives$gpus.json" "$work/$suite.json" > "$work/busbw_compare$gpus.txt" 2>&1
      pack ;;
    router1)
      for tokens in 2048 8192 16384; do
        for shape in 128:8 8:2 16:1; do
          run "router1_topk_e${shape%:*}k${shape#*:}_t${tokens}" "$build/contention_bench" -g 1 -w 3 -n 30 \
            --comms ce_copy --sizes_mib 32 --compute topk --experts "${shape%:*}" --top_k "${shape#*:}" --tokens "$tokens"
        done
        run "router1_norm_h2048_t${tokens}" "$build/contention_bench" -g 1 -w 3 -n 30 --comms ce_copy \
          --sizes_mib 32 --compute rmsnorm --norm_width 2048 --mem_mib $((tokens * 2048 * 2 >> 20))
      done ;;
    tile_gemm)
      run tile_gemm "$build/tile_gemm_bench" -w 3 -n 20
      { cuobjdump -sass "$build/tile_gemm_bench" 2>&1 || /usr/local/cuda/bin/cuobjdump -sass "$build/tile_gemm_bench" 2>&1; } |
        grep -oE "(HMMA|LDGSTS|LDSM|LDL|STL)[.0-9A-Z]*" | sort | uniq -c > "$work/tile_gemm_sass.txt"
      pack ;;
    gemm_attn)
      run gemm_attn "$build/gemm_bench" -w 5 -n 30 -G 64 --algos 1 --groups attn --attn_tokens 512,1024,2048,8192 ;;
    torch_gemm)
      torch_gemm torch_gemm "$work/gemm.json"
      pack ;;
    gemm_models)
      MOESIM_SUITE_TIMEOUT=${MOESIM_SUITE_TIMEOUT:-600} run gemm_models "$build/gemm_bench" -w 5 -n 30 -G 64 \
        --groups models --dtypes bf16 --attn_tokens 4096 --expert_tokens 256,1024,4096 ;;
    torch_gemm_models)
      MOESIM_SUITE_TIMEOUT=${MOESIM_SUITE_TIMEOUT:-600} torch_gemm torch_gemm_models "$work/gemm_models.json"
      pack ;;
    gemm_check)
      rounds=()
      for r in 1 2 3; do
        run "gemm_r$r" "$build/gemm_bench" -w 5 -n 30 -G 64
        torch_gemm "torch_gemm_r$r" "$work/gemm_r$r.json"
        rounds+=("$work/torch_gemm_r$r.json")
      done
      python3 "$repo/kernels/tools/torch_gemm_compare.py" --combine "${rounds[@]}" --json "$work/gemm_check.json" \
        > "$work/gemm_check.txt" 2>&1
      pack ;;
    torch_sdpa)
      # The tool's default head counts (16, 32, 64): moesim calibrate then writes attention_fwd.batch_heads
      # and reads other models' heads at the length of equal work (hwprofiles/FORMAT.md).
      echo "=== torch_sdpa" | tee -a "$work/summary.txt"
      timeout "${MOESIM_SUITE_TIMEOUT:-240}" python3 "$repo/kernels/tools/torch_sdpa_compare.py" \
        --json "$work/torch_sdpa.json" > "$work/torch_sdpa.log" 2>&1
      echo "=== torch_sdpa: exit $?" | tee -a "$work/summary.txt"
      pack ;;
    *) table_suite "$suite" || echo "unknown suite $suite" | tee -a "$work/summary.txt" ;;
  esac
done
pack
# The end of every log, for the reply.
for f in "$work"/*.log; do
  echo "##### $(basename "$f")"
  grep -E '^#.*(GPU [0-9]|error|WARNING|Verified|skipped)' "$f" | head -8
  grep -v '^#' "$f" | tail -4
done
for f in "$work"/busbw_compare*.txt "$work"/torch_gemm.log "$work"/gemm_check.txt "$work"/tile_gemm_sass.txt \
  "$work"/torch_gemm_models.log; do
  [ -f "$f" ] && { echo "##### $(basename "$f")"; cat "$f"; }
done
if [ -f "$work/nccl_info4.log" ]; then  # an `a && b` last line would make the script fail when a is false
  echo "##### nccl channels"
  grep -iE "channels|nChannels|CTAs" "$work/nccl_info4.log" | sort | uniq -c | head -20
fi
