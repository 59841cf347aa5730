#!/usr/bin/env bash
# Every failure class of issue 31, tried as a hostile user would: each bad input must end with exit 2, one
# line on stderr naming the file or flag (and the JSON path or line where there is one), within seconds.
# Usage: bad_inputs_test.sh MOESIM WORK_DIR
set -u
moesim=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(realpath -m "$2/bad_inputs")
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
passed=0
failed=0
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

# expect CODE REGEX SECONDS ARGS...: exit CODE, exactly one stderr line matching REGEX, done within SECONDS.
expect() {
  local code=$1 regex=$2 seconds=$3
  shift 3
  local start=$SECONDS
  timeout "$seconds" "$moesim" "$@" > out.txt 2> err.txt < /dev/null
  local rc=$?
  local lines
  lines=$(wc -l < err.txt)
  if ((rc == 124)); then bad "took over ${seconds} s: moesim $*"; return; fi
  if ((rc != code)); then bad "exit $rc (want $code): moesim $* -- $(head -c 300 err.txt)"; return; fi
  if ((lines != 1)); then bad "stderr has $lines lines: moesim $* -- $(head -c 300 err.txt)"; return; fi
  if (($(wc -c < err.txt) > 600)); then bad "stderr line of $(wc -c < err.txt) bytes: moesim $*"; return; fi
  if ! grep -qE -- "$regex" err.txt; then bad "message '$(cat err.txt)' !~ /$regex/"; return; fi
  if grep -q "internal error" err.txt; then bad "internal error: $(cat err.txt)"; return; fi
  passed=$((passed + 1))
  echo "ok $((SECONDS - start))s: $(cat err.txt)" >> log.txt 2> /dev/null
}

sim=(simulate --model gpt-moe-s --hw h100 --ep 8 --layers 2 --tokens 256)
model() { sed "$1" "$root/models/specs/gpt-moe-s.json" > "$2"; }
profile() { python3 -c "import json,sys; d=json.load(open('$root/hwprofiles/profiles/h100.json')); $1; json.dump(d, open('$2','w'))"; }

# --- crashes: 100k-deep JSON (the printing or destroying recursed), appends to what cannot take them ---
python3 -c "print('['*100000 + ']'*100000)" > deep.json
python3 -c "print('{\"a\":'*100000 + '1' + '}'*100000)" > deepobj.json
expect 2 'deep.json: /0/0/0.* nests arrays and objects deeper than 64' 10 "${sim[@]}" --model deep.json
expect 2 'deepobj.json: /a/a.* nests arrays and objects deeper than 64' 10 "${sim[@]}" --hw deepobj.json
expect 2 'deep.json: .*deeper than 64' 10 sweep deep.json --out deep.csv
mkdir results_dir.csv
echo '{"schema_version": 1, "base": {"model": "gpt-moe-s", "hw": "h100", "layers": 1, "tokens": 256}, "axes": {"ep": [8]}}' > one.json
expect 2 'results_dir.csv": is a directory, not a file' 10 sweep one.json --out results_dir.csv --resume

# --- "internal error" from input: numbers past the double range, wrong JSON types, stoi/stol overflow ---
model 's/"layers": [0-9]*/"layers": 1e400/' big.json
expect 2 'big.json: /layers = 1e400: is outside the range of a double' 10 "${sim[@]}" --model big.json
model 's/"layers": [0-9]*/"layers": 9223372036854775808/' wrap.json
expect 2 'wrap.json: /layers = 9223372036854775808: must be < 2\^63' 10 "${sim[@]}" --model wrap.json
model 's/"layers": [0-9]*/"layers": 18446744073709551617/' wrap64.json
expect 2 'wrap64.json: /layers = 1.8446744073709552e\+19: expected an integer' 10 "${sim[@]}" --model wrap64.json
echo '{"traceEvents": [{"ph": "X", "cat": 7, "name": "k", "dur": 1}]}' > cat.json
expect 2 'cat.json: /traceEvents/0/cat = 7: must be a string' 10 calibrate --base h100 --out o1.json --torch-trace cat.json
echo '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": ["k"], "dur": 1}]}' > name.json
expect 2 'name.json: /traceEvents/0/name = \[\.\.\.\]: must be a string' 10 calibrate --base h100 --out o2.json --torch-trace name.json
log_head='# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid 1 on host device  0 [0x1] GPU
#  Rank  1 Group  0 Pid 2 on host device  1 [0x2] GPU'
printf '%s\n#  Rank 99999999999999999999 Group 0 Pid 3 on host device 2 [0x3] GPU\n' "$log_head" > rank.log
expect 2 'rank.log:4: rank "99999999999999999999": expected a rank below' 10 calibrate --base h100 --out o3.json --nccl-tests rank.log
printf '%s\n 1048576 262144 float sum -1 1e-310 1 1 0 20.0 52.43 26.21 0\n' "$log_head" > denormal.log
expect 2 'denormal.log:4: .*expected 0 or at least 0.01 us' 10 calibrate --base h100 --out o4.json --nccl-tests denormal.log
for time in nan inf 1e308; do
  printf '%s\n 1048576 262144 float sum -1 %s 1 1 0 20.0 52.43 26.21 0\n' "$log_head" "$time" > "time_$time.log"
  expect 2 "time_$time.log:4: column 6 = \"$time\": expected a" 10 calibrate --base h100 --out "o_$time.json" \
    --nccl-tests "time_$time.log"
done
printf 'id,ep,status,step_ms,layer_ms,compute_ms,comm_ms,exposed_comm_ms,overlap_pct,sm_busy_pct,mfu_pct,tokens_per_s,speedup,error\nep=8,8,ok,fast,,,,,,,,,,\n' > cells.csv
expect 2 'cells.csv: line 2 column 4 \(step_ms\) is not a finite number' 10 sweep one.json --out cells.csv --resume

# --- hardware values the engine cannot run (the validator accepted them) ---
profile "d['contention']['comm_sms'] = 0" sms0.json
expect 2 'sms0.json: /contention/comm_sms = 0: must be >= 1' 10 "${sim[@]}" --hw sms0.json
profile "d['gpu']['launch_overhead_us'] = 1e308" launch.json
expect 2 'launch.json: /gpu/launch_overhead_us = 1e\+308: must be in \[0, 10000\]' 10 "${sim[@]}" --hw launch.json
profile "d['gpu']['hbm_bw_GBps'] = 1e-310" denormal_bw.json
expect 2 'denormal_bw.json: /gpu/hbm_bw_GBps = 9[.0-9]*e-311: must be in \[0.001,' 10 "${sim[@]}" --hw denormal_bw.json
profile "d['gpu']['peak_clock_mhz'] = 1e9; d['gpu']['max_boost_clock_mhz'] = 1e9" clock.json
expect 2 'clock.json: /gpu/peak_clock_mhz = 1000000000: must be in \[100, 10000\]' 10 "${sim[@]}" --hw clock.json
profile "d['gpu']['sm_count'] = 1000000" sms.json
expect 2 'sms.json: /gpu/sm_count = 1000000: must be in \[1, 65536\]' 10 "${sim[@]}" --hw sms.json
expect 2 'jitter = "rank:1e300,1e301": expected' 10 "${sim[@]}" --jitter rank:1e300,1e301

# --- unbounded work: huge models and token counts, FIFOs, devices, folders, big files, huge sweeps ---
model 's/"layers": [0-9]*/"layers": 1000000/' layers.json
expect 2 'layers.json: /layers = 1000000: must be <= 10000' 10 "${sim[@]}" --model layers.json
model 's/"experts": [0-9]*/"experts": 1073741824/' experts.json
expect 2 'experts.json: /moe/experts = 1073741824: must be <= 65536' 10 "${sim[@]}" --model experts.json
expect 2 '--mbs x --seq = 1048576 x 1048576 = 1099511627776 tokens: must be <= 1048576' 10 \
  simulate --model gpt-moe-s --mbs 1048576 --seq 1048576
mkfifo fifo.json
expect 2 'fifo.json: is a FIFO, not a regular file' 10 "${sim[@]}" --model fifo.json
expect 2 '/dev/zero: is a character device, not a regular file' 10 "${sim[@]}" --hw /dev/zero
expect 2 '/dev/zero: is a character device' 10 calibrate --base h100 --out o5.json --torch-trace /dev/zero
mkdir folder.json
expect 2 'folder.json: is a directory, not a regular file' 10 "${sim[@]}" --model folder.json
head -c 100000000 /dev/zero | tr '\0' ' ' > huge.json
expect 2 'huge.json: is 96 MiB, more than the 16 MiB limit' 10 "${sim[@]}" --model huge.json
echo '{"schema_version": 1, "axes": {"tokens": {"from": 1, "to": 1e7, "step": 1}}}' > range.json
expect 2 'range.json: /axes/tokens holds 10000000 values, more than the 100000' 10 sweep range.json --out r.csv
echo '{"schema_version": 1, "axes": {"tokens": {"from": 1, "to": 1e300, "mul": 2}}}' > overflow.json
expect 2 'overflow.json: /axes/tokens/to = 1e\+300: must be within' 10 sweep overflow.json --out r.csv
echo '{"schema_version": 1, "axes": {"a": [1,2,3,4,5,6,7,8,9,10], "b": [1,2,3,4,5,6,7,8,9,10],
  "c": [1,2,3,4,5,6,7,8,9,10], "d": [1,2,3,4,5,6,7,8,9,10], "e": [1,2,3,4,5,6,7,8,9,10],
  "f": [1,2,3,4,5,6,7,8,9,10]}}' > points.json
expect 2 'points.json: /axes expand to 1000000 points, more than the 100000' 10 sweep points.json --out r.csv

# --- bounded work: scenarios too large to simulate are refused before they are built ---
expect 2 'the scenario needs [0-9.e+]+ engine ops or more, past the 10000000' 10 simulate --model deepseek-v2-lite \
  --ep 8 --layers 4 --tokens 1048576 --schedule megakernel --phase forward --per-rank
sed 's/"layers": [0-9]*/"layers": 10000/' "$root/models/specs/deepseek-v3.json" > deep_layers.json
expect 2 'the scenario needs 30720000 engine ops or more' 10 simulate --model deep_layers.json --hw h200 --ep 256 \
  --nodes 32 --per-rank --tokens 4096
sed 's/"top_k": [0-9]*/"top_k": 256/' "$root/models/specs/deepseek-v3.json" > topk.json
expect 2 'the routing would draw 68719476736 token-expert choices \(256 ranks x 1048576 tokens x top_k 256\)' 10 \
  simulate --model topk.json --hw h200 --ep 256 --nodes 32 --tokens 1048576 --routing uniform
sed 's/"experts": [0-9]*/"experts": 65536/' "$root/models/specs/deepseek-v3.json" > wide.json
profile "d['network']['max_nodes'] = 16384" wide_hw.json
expect 2 "the scenario's routing and all-to-all matrices would take [0-9.]+ GiB \(65536 ranks" 10 simulate \
  --model wide.json --hw wide_hw.json --ep 65536 --tokens 4096 --layers 4

# --- silent nonsense: duplicated keys, nan flags, wrapped sums, impossible records, unknown metrics ---
printf '{"schema_version": 1, "schema_version": 1}' > dup.json
expect 2 'dup.json: /schema_version appears twice in one object' 10 "${sim[@]}" --model dup.json
expect 2 '[-]-capacity-factor: expected a finite number in \[0, 1000\], got nan' 10 "${sim[@]}" --capacity-factor nan
expect 2 '[-]-capacity-factor: expected a finite number in \[0, 1000\], got 1e\+308' 10 "${sim[@]}" --capacity-factor 1e308
expect 2 'routing = "zipf:1e308": the zipf exponent S must be a number in \(0, 100\]' 10 "${sim[@]}" --routing zipf:1e308
expect 2 '[-]-seed: expected a whole number in \[0, 4611686018427387904\]' 10 "${sim[@]}" --seed 99999999999999999999999
expect 2 '[-]-tolerance: expected a finite number in \[0, 1000000\], got nan' 10 validate --published --tolerance nan
# A host probe needs a profile that carries one (learned from a record with host probes), and not --host-speed too.
expect 2 '[-]-host-probe needs an implementation profile with host.probe_us' 10 "${sim[@]}" --impl grouped --host-probe 12
expect 2 '[-]-host-probe give --host-speed or --host-probe, not both' 10 "${sim[@]}" --impl grouped --host-probe 12 --host-speed 2
expect 2 '[-]-host-probe applies only to --measured' 10 validate --published --host-probe
# calibrate's numbers for a trace without a run record: nan or inf would be dropped as "not given"
expect 2 '[-]-host-probe-us: expected a finite number in \[0.001, 1000000\], got nan' 10 calibrate --base h100 \
  --impl-out o_probe.json --torch-trace "$root/tests/calibrate/data/torch-stacks/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced.rank0.trace.json.gz" \
  --host-probe-us nan
expect 2 '[-]-untraced-issue-ms: expected a finite number in \[1e-06, 1000000000\], got inf' 10 calibrate --base h100 \
  --impl-out o_issue.json --torch-trace "$root/tests/calibrate/data/torch-stacks/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced.rank0.trace.json.gz" \
  --untraced-issue-ms inf
echo '[[4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387904]]' > wrap_routing.json
expect 2 'wrap_routing.json: /0/0 = 4611686018427387904: must be an integer in \[0, 2\^32\]' 10 "${sim[@]}" \
  --routing recorded:wrap_routing.json
python3 - "$root/tests/validate/data/layer_runner_fixture.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"][0]["overlap_pct"] = -5
json.dump(d, open("overlap.json", "w"))
d["results"][0]["overlap_pct"] = 5
d["results"][0]["speedup_vs_regular"] = -1
json.dump(d, open("speedup.json", "w"))
d["results"][0].pop("speedup_vs_regular")
d["schema_version"] = 7
json.dump(d, open("schema.json", "w"))
PY
expect 2 'overlap.json: /results/0/overlap_pct = -5: must be in \[0, 100\]' 10 validate --measured overlap.json
expect 2 'speedup.json: /results/0/speedup_vs_regular = -1: must be in \(0, 1000\]' 10 validate --measured speedup.json
expect 2 'schema.json: /schema_version = 7: must be 1' 10 validate --measured schema.json
# a torch-stack record of a user's model names its spec relative to the record's folder
python3 -c "import json; d = json.load(open('$root/tests/calibrate/data/torch-stacks/qwen3-30b-a3b.grouped.ep1.t256.s128.l2.forward.regular.balanced.json')); d['config']['model_spec'] = 'specs/mine.json'; d['traces'] = []; json.dump(d, open('own_record.json', 'w'))"
expect 2 'own_record.json: /config/model_spec = "specs/mine.json": no such file' 10 validate --measured own_record.json --hw h100
echo '{"schema_version": 1, "base": {"model": "gpt-moe-s"}, "axes": {"ep": [8, 8]}}' > ids.json
expect 2 'ids.json: /axes/ep/1 = "8": repeats value 0' 10 sweep ids.json --out i.csv
printf '{"schema_version": 1, "axes": {"opt": ["a=1\\nb=2"]}}' > newline.json
expect 2 'newline.json: /axes/opt/0 = .*must not hold control characters' 10 sweep newline.json --out i.csv
echo '{"schema_version": 1, "base": {"model": "gpt-moe-s"}, "axes": {"ep": [8]}, "metric": "nope"}' > metric.json
expect 2 'metric.json: /metric = "nope": expected one of step_ms' 10 sweep metric.json --out i.csv
echo '{"schema_version": 1, "base": {"model": "no-such-model", "layers": 1}, "axes": {"ep": [8, 16]}}' > allfail.json
"$moesim" sweep allfail.json --out allfail.csv > /dev/null 2> allfail.err
rc=$?
if ((rc == 2)) && grep -q "every point of the sweep failed" allfail.err; then passed=$((passed + 1)); else
  bad "a sweep whose every point fails exits $rc: $(cat allfail.err)"; fi
echo '{"traceEvents": []}' > empty_trace.json
expect 2 'empty_trace.json: /traceEvents holds no GPU kernel' 10 calibrate --base h100 --out o6.json --torch-trace empty_trace.json

# --- outputs: shared, on an input, unwritable, a full disk (RLIMIT_FSIZE stands in: same write path) ---
expect 2 '[-]-trace = "same.json": is also the output of --json' 10 "${sim[@]}" --json same.json --trace same.json
cp "$root/models/specs/gpt-moe-s.json" mine.json
expect 2 '[-]-json = "mine.json": is the input of --model' 10 "${sim[@]}" --model mine.json --json mine.json
expect 2 '[-]-json = "nodir/x.json": its directory nodir does not exist' 10 "${sim[@]}" --json nodir/x.json
expect 2 '[-]-json = "folder.json": is a directory, not a file' 10 "${sim[@]}" --json folder.json
expect 2 '[-]-out = "one.json": is the input of the sweep file' 10 sweep one.json --out one.json
(
  trap '' XFSZ
  ulimit -f 4  # 4 KiB: the trace does not fit
  expect 2 'full.trace.json: could not be written: File too large' 30 "${sim[@]}" --trace full.trace.json
  [[ ! -e full.trace.json ]] || bad "a failed write left full.trace.json behind"
  echo "$passed $failed" > sub.counts
)
read -r passed failed < sub.counts

# --- messages: compact numbers ---
python3 -c "
import json; d = json.load(open('$root/tests/fuzz/corpus/bench_results/gemm.json'))
d['results'][0]['time_us']['p50'] = 1e308; json.dump(d, open('p50.json', 'w'))"
expect 2 'p50.json: /results/0/time_us/p50 = 1e\+308: must be in \[0.001, 3.6e9\] us' 10 calibrate --base h100 \
  --out o7.json --from p50.json

echo "bad inputs: $passed passed, $failed failed (each case's time and message in $work/log.txt)"
((failed == 0))
