#!/bin/bash
# Runs the bench/ suite on the device host's CPUs (quiet, 16 cores) with binaries built on the dev machine.
set -u
root=$PWD
mkdir -p /work && ln -sfn "$root" /work/main
export LD_LIBRARY_PATH=$root/devbench/lib
export MOESIM_DATA_DIR=$root
mkdir -p build-dev/app build-dev/bench
cp devbench/moesim build-dev/app/moesim; cp devbench/moesim_bench build-dev/bench/moesim_bench
{ date -u; nproc; lscpu | grep -E "Model name|MHz"; free -g | head -2; } > $OUT/machine.txt 2>&1
ldd build-dev/bench/moesim_bench >> $OUT/machine.txt 2>&1
b=build-dev/bench/moesim_bench
run() { filter=$1 out=$2 cpus=$3 t=$4; timeout $t taskset -c $cpus $b --benchmark_filter="$filter" \
  --benchmark_out=$OUT/$out.json --benchmark_out_format=json --benchmark_counters_tabular=true > $OUT/$out.txt 2>&1; echo "$out rc=$?" >> $OUT/rc.txt; }
# One pinned core per benchmark (two for the sweep), all at once: the host has 16.
run 'BM_FlowHeavyDag' flow 2 200 &
run 'BM_DeepSeekV3Step/ep:(8|16)/layers:61' step_8_16 3 300 &
run 'BM_DeepSeekV3Step/ep:32/layers:61' step_32 4 400 &
run 'BM_DeepSeekV3Step/ep:64/layers:61' step_64 5 400 &
run 'BM_DeepSeekV3Step/ep:128/layers:61' step_128 6 450 &
run 'BM_DeepSeekV3Step/ep:256/layers:61' step_256 7 450 &
run 'BM_Step1024Gpus' step_1024 8 450 &
run 'BM_Sweep1000Points' sweep 10,11 300 &
wait
tail -n 8 $OUT/*.txt
