#!/usr/bin/env bash
# Fuzzes every target of a moesim_fuzz binary (a clang build with -DMOESIM_FUZZ=ON) for SECONDS each,
# starting from the committed seeds in tests/fuzz/corpus/<target>/, and prints executions and executions/s
# per target. Exit 1 on the first finding (its input is kept in the work folder; replay it with
# MOESIM_FUZZ_TARGET=<target> moesim_fuzz <file>). Usage: run_fuzz.sh MOESIM_FUZZ SECONDS [TARGET...]
# The work folder (new corpus inputs, findings) is $MOESIM_FUZZ_WORK, default build-fuzz/fuzz-work.
set -u
fuzzer=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=${MOESIM_FUZZ_WORK:-$(dirname "$(dirname "$(dirname "$fuzzer")")")/fuzz-work}
mkdir -p "$work"
mapfile -t targets < <(if (($# > 0)); then printf '%s\n' "$@"; else MOESIM_FUZZ_TARGET=list "$fuzzer"; fi)
((${#targets[@]} > 0)) || { echo "run_fuzz: $fuzzer lists no targets"; exit 1; }
printf '# %-22s %8s %12s %10s\n' target seconds executions "exec/s"
failed=0
for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  log="$work/$target.log"
  # -timeout / -rss_limit_mb / -malloc_limit_mb: an input that takes 10 s or 2 GiB is a finding too.
  MOESIM_FUZZ_TARGET=$target "$fuzzer" "$work/$target" "$here/corpus/$target" -dict="$here/json.dict" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$work/$target-" -print_final_stats=1 > "$log" 2>&1
  status=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  printf '  %-22s %8s %12s %10s\n' "$target" "$seconds" "${runs:-?}" "${rate:-?}"
  if ((status != 0)); then
    failed=1
    echo "run_fuzz: $target found a failing input (exit $status); log: $log"
    grep -E "ERROR|SUMMARY|==[0-9]+==|uncaught|Test unit written" "$log" | head -20
  fi
done
exit $failed
