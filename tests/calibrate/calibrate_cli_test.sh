#!/usr/bin/env bash
# `moesim calibrate` / `moesim bench` from the command line: exit codes and one-line errors.
#   calibrate_cli_test.sh MOESIM WORK_DIR DATA_DIR
set -u
moesim=$1 work=$2 data=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
expect() {  # expect NAME CODE PATTERN -- COMMAND...
  local name=$1 code=$2 pattern=$3
  shift 4
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [[ $got -ne $code ]]; then echo "FAIL $name: exit $got, expected $code"; cat "$work/err"; fail=1; return; fi
  if [[ -n "$pattern" ]] && ! grep -qE "$pattern" "$work/err" "$work/out"; then
    echo "FAIL $name: no match for '$pattern'"; cat "$work/out" "$work/err"; fail=1; return
  fi
  if [[ $code -eq 2 && $(wc -l < "$work/err") -ne 1 ]]; then echo "FAIL $name: error is not one line"; cat "$work/err"; fail=1; fi
}

# A truncated nccl-tests row: the error names the file and the line.
head -20 "$data/all_reduce_perf_8xh100.log" > "$work/all_reduce_perf.log"
echo "    16777216       4194304     float     sum      -1    97.89  171.39" >> "$work/all_reduce_perf.log"
expect bad_log 2 "all_reduce_perf.log:21: expected 13 columns" -- \
  "$moesim" calibrate --nccl-tests "$work/all_reduce_perf.log" --base h100 --out "$work/p.json"
# Broken JSON results: file and line.
printf '{\n "schema_version": 1,\n "tool": "moesim-kernels"\n "benchmark": "gemm"}\n' > "$work/gemm.json"
expect bad_json 2 "gemm.json:4: invalid JSON" -- \
  "$moesim" calibrate --from "$work/gemm.json" --base h100 --out "$work/p.json"
expect no_inputs 2 "nothing to fit" -- "$moesim" calibrate --base h100 --out "$work/p.json"
# A good log: residual table on stdout ('#' lines), the profile written, never overwritten.
expect good 0 "^# all_reduce intra 8 " -- \
  "$moesim" calibrate --nccl-tests "$data/all_reduce_perf_8xh100.log" --base h100 --out "$work/p.json"
expect second 0 "wrote .*p.json.1" -- \
  "$moesim" calibrate --nccl-tests "$data/all_reduce_perf_8xh100.log" --base h100 --out "$work/p.json"
cmp -s "$work/p.json" "$work/p.json.1" || { echo "FAIL: same inputs, different files"; fail=1; }
grep -v '^#' "$work/out" && { echo "FAIL: a residual line without '#'"; fail=1; }
"$moesim" simulate --help > /dev/null || fail=1
# bench in a build without GPU programs: exit 2 and say how to configure.
if [[ ! -x "$(dirname "$moesim")/../kernels/launch_bench" ]]; then
  expect bench_no_gpu 2 "MOESIM_GPU_BACKEND=CUDA" -- "$moesim" bench --out "$work/bench.json"
fi
expect bench_bad_suite 2 "" -- "$moesim" bench --suite gemm --kernels-dir "$work" --out "$work/bench.json"

# Implementation profiles learned from a trace (--impl-out): the record beside it gives the configuration.
stack=$data/torch-stacks/qwen3-30b-a3b.grouped.ep2.t256.s128.l2.train.farskip.balanced
expect impl_learn 0 "routed_experts|host time scaled by" -- \
  "$moesim" calibrate --torch-trace "$stack.rank0.trace.json.gz" --base h100 --impl-out "$work/impl.json"
"$moesim" simulate --model qwen3-30b-a3b --hw h100 --ep 2 --tokens 256 --seq 128 --layers 2 \
  --impl "$work/impl.json" > "$work/sim" || { echo "FAIL: simulate --impl with the learned profile"; fail=1; }
grep -q "implementation learned" "$work/sim" || { echo "FAIL: the summary does not name the implementation"; fail=1; }
# A foreign trace (the legacy profiler's bare list) and a trace without GPU kernels: exit 2, one line.
expect impl_foreign 2 "traceEvents is missing" -- "$moesim" calibrate --torch-trace \
  "$data/torch-stacks/cpu-legacy/qwen3-30b-a3b.grouped.ep1.t64.s32.l2.forward.farskip.balanced.rank0.trace.json.gz" \
  --base h100 --impl-out "$work/impl2.json"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}' > "$work/cpu.json"
expect impl_no_kernels 2 "holds no GPU kernels" -- \
  "$moesim" calibrate --torch-trace "$work/cpu.json" --base h100 --impl-out "$work/impl3.json"
# No record beside the trace: the configuration must be given.
cp "$stack.rank0.trace.json.gz" "$work/bare.trace.json.gz"
expect impl_no_record 2 "give the traced run's --model" -- \
  "$moesim" calibrate --torch-trace "$work/bare.trace.json.gz" --base h100 --impl-out "$work/impl4.json"
expect impl_given 0 "no untraced issue time" -- "$moesim" calibrate --torch-trace "$work/bare.trace.json.gz" \
  --base h100 --impl-out "$work/impl4.json" --model qwen3-30b-a3b --ep 2 --tokens 256 --seq 128
# The untraced issue times a user timed: the profiler's overhead comes out, per pass with the forward's.
expect impl_untraced 0 "host time scaled by .* forward, .* backward" -- "$moesim" calibrate --torch-trace \
  "$work/bare.trace.json.gz" --base h100 --impl-out "$work/impl5.json" --model qwen3-30b-a3b --ep 2 \
  --tokens 256 --seq 128 --untraced-issue-ms 20 --untraced-forward-ms 8
expect impl_forward_alone 2 "needs the whole step's: give --untraced-issue-ms" -- "$moesim" calibrate \
  --torch-trace "$work/bare.trace.json.gz" --base h100 --impl-out "$work/impl6.json" --model qwen3-30b-a3b \
  --ep 2 --tokens 256 --seq 128 --untraced-forward-ms 8
expect impl_forward_too_long 2 "untraced-forward-ms 30.000: expected less" -- "$moesim" calibrate \
  --torch-trace "$work/bare.trace.json.gz" --base h100 --impl-out "$work/impl7.json" --model qwen3-30b-a3b \
  --ep 2 --tokens 256 --seq 128 --untraced-issue-ms 20 --untraced-forward-ms 30
expect impl_bad 2 "impl.bad.json: /ops/0/pass" -- bash -c \
  "sed 's/\"pass\": \"forward\"/\"pass\": \"sideways\"/' '$work/impl.json' > '$work/impl.bad.json' && \
   '$moesim' simulate --model qwen3-30b-a3b --hw h100 --ep 2 --tokens 256 --impl '$work/impl.bad.json'"
exit $fail
