#!/usr/bin/env bash
# usage: cli_test.sh MOESIM WORKDIR
set -u
moesim=$1
work=$2/cli
rm -rf "$work" && mkdir -p "$work"
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_error CODE REGEX ARGS... : exit code and a single stderr line matching REGEX
expect_error() {
  local code=$1 regex=$2; shift 2
  "$moesim" "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  local lines
  lines=$(wc -l < "$work/err")
  if [[ $rc -ne $code ]]; then bad "exit $rc (want $code): moesim $*"; cat "$work/err"; return; fi
  if [[ $lines -ne 1 ]]; then bad "stderr has $lines lines: moesim $*"; cat "$work/err"; return; fi
  if ! grep -qE "$regex" "$work/err"; then bad "message '$(cat "$work/err")' !~ /$regex/"; return; fi
  ok
}

base=(simulate --model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 1 --seq 4096 --layers 2)

# Bad input: exit 2, one line naming the file or flag, the JSON path and the rule.
cat > "$work/typo.json" << 'J'
{ "schema_version": 1, "name": "x", "layers": 2, "dense_layers": 0, "hidden": 1024, "vocab": 1000,
  "attention": { "type": "gqa", "heads": 8, "kv_heads": 8, "head_dim": 128 },
  "moe": { "experts": 8, "top_k": 2, "expert_ffn": 512, "shared_experts": 0, "shared_ffn": 0 },
  "dense_ffn": 0, "activation": "swiglu", "norm": "rmsnorm", "source": "test", "hiden": 3 }
J
expect_error 2 'typo.json: /hiden is not a known key' "${base[@]}" --model "$work/typo.json"
profile_dir=$(dirname "$0")/../../hwprofiles/profiles
python3 -c "
import json,sys
p=json.load(open('$profile_dir/h100.json')); p['node']['fabric']['link_bw_GBps']=0
json.dump(p,open('$work/zero_bw.json','w'))"
expect_error 2 'zero_bw.json: /node/fabric/link_bw_GBps = 0: must be > 0' "${base[@]}" --hw "$work/zero_bw.json"
echo '{ "name": ' > "$work/broken.json"
expect_error 2 'broken.json:2: invalid JSON' "${base[@]}" --hw "$work/broken.json"
expect_error 2 'ep 3 does not divide the 64 experts' "${base[@]}" --ep 3
expect_error 2 'tokens 5000 is not divisible by --seq 4096' "${base[@]}" --tokens 5000
expect_error 2 'unknown schedule' "${base[@]}" --schedule nope
expect_error 2 'parts=both: expected all, attn_only or mlp_only' "${base[@]}" --schedule farskip --opt parts=both
expect_error 2 'routing' "${base[@]}" --routing zipf:-1
expect_error 2 'no-such-model' "${base[@]}" --model no-such-model
expect_error 2 'dtype' "${base[@]}" --dtype int3
expect_error 2 'ep' "${base[@]}" --ep 0
expect_error 2 'power = "bogus": expected cap or off' "${base[@]}" --power bogus

# --compare-engine: a row per engine, the JSON names both (2 nodes on a 2:1 fat tree).
"$moesim" simulate --model qwen3-30b-a3b --hw h100 --ep 16 --nodes 2 --layers 1 --engine analytic \
  --cluster "$(dirname "$0")/../../hwprofiles/clusters/fat-tree-2to1-8x400.json" --compare-engine simgrid \
  --json "$work/engines.json" > "$work/engines.txt" 2> "$work/err" || bad "--compare-engine failed: $(cat "$work/err")"
if grep -q '^  regular \[simgrid\] ' "$work/engines.txt" && python3 -c "
import json
d = json.load(open('$work/engines.json'))
assert d['engine']['backend'] == 'analytic' and d['speedup_vs']['engine'] == 'simgrid', d['speedup_vs']
"; then ok; else bad "--compare-engine rows and JSON"; fi
expect_error 2 'compare excludes --compare-engine' "${base[@]}" --compare regular --compare-engine simgrid

# The issue's JSON contract.
"$moesim" "${base[@]}" --schedule farskip --compare regular --json - > "$work/r.json" 2> "$work/err" || bad "json run failed: $(cat "$work/err")"
if python3 -c "
import json,sys
d=json.load(open('$work/r.json'))
for k in ['step_ms','layer_ms','comm_ms','exposed_comm_ms','overlap_pct','speedup_vs','schema_version']:
    assert k in d, k
assert d['speedup_vs']['speedup'] > 1.0
assert 0 <= d['overlap_pct'] <= 100
"; then ok; else bad "JSON lacks a required key"; fi

# Determinism: byte-identical JSON and trace, full per-rank simulation with random routing included.
for i in 1 2; do
  "$moesim" "${base[@]}" --schedule farskip --routing uniform --seed 7 --json "$work/d.json" --trace "$work/t.json" > /dev/null || bad "run $i"
  mv "$work/d.json" "$work/d$i.json" && mv "$work/t.json" "$work/t$i.json"
done
if cmp -s "$work/d1.json" "$work/d2.json" && cmp -s "$work/t1.json" "$work/t2.json"; then ok; else bad "reruns differ"; fi
python3 -c "import json; d=json.load(open('$work/t1.json')); assert any(e.get('ph')=='X' for e in d['traceEvents'])" && ok || bad "trace not Chrome JSON"

# FlashMoE family: flag errors name the flag, the megakernel JSON carries its metrics, jitter is seeded.
fm=(simulate --model flashmoe-eval --hw h100 --phase forward --ep 2 --tokens 1024 --seq 1024 --capacity-factor 1.0)
expect_error 2 'jitter = "rank:5"' "${fm[@]}" --schedule megakernel --jitter rank:5
expect_error 2 'repeat = 0' "${fm[@]}" --schedule megakernel --repeat 0
expect_error 2 'tile_m=0: expected an integer' "${fm[@]}" --schedule megakernel --opt tile_m=0
expect_error 2 'payload=some: expected efficient|padded' "${fm[@]}" --schedule megatron-te --opt payload=some
expect_error 2 'use --phase forward' "${fm[@]}" --schedule megakernel --phase train
for i in 1 2; do
  "$moesim" "${fm[@]}" --schedule megakernel --jitter table2-vm --repeat 4 --json "$work/fm.json" > /dev/null || bad "flashmoe run $i"
  mv "$work/fm.json" "$work/fm$i.json"
done
if cmp -s "$work/fm1.json" "$work/fm2.json" && python3 -c "
import json
d=json.load(open('$work/fm1.json'))
assert d['flashmoe']['kernels_per_rank'] == 1
assert d['noise']['repeat'] == 4 and d['noise']['layer_ms_p95'] >= d['noise']['layer_ms_p50'] > 0
assert 0 < d['sm_util_pct'] <= 100
"; then ok; else bad "flashmoe JSON or determinism"; fi

# validate --json FILE writes the same rows as --json - prints, and the table still goes to stdout.
# --published reads two of the shipped files (every row status and kind among them; all of them take
# minutes under the sanitizers, and docs.validation-tables and validate.Published run them all).
repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=$repo/data/layer-runs/2026-11-22-nvidia-h200-x4-run2/lv-x4-profile/a2a4-qwen3-30b-a3b-t2048-balanced.json
mkdir -p "$work/data/validate/published"
ln -s "$repo/models" "$repo/hwprofiles" "$work/data/"
cp "$repo"/validate/published/1-farskip.json "$repo"/validate/published/2-foldmoe.json "$work/data/validate/published/"
for mode in --published "--measured $runs"; do
  # shellcheck disable=SC2086  # $mode is a flag and, for --measured, its file
  MOESIM_DATA_DIR=$work/data "$moesim" validate $mode --json "$work/rows.json" > "$work/table.txt"
  # shellcheck disable=SC2086
  MOESIM_DATA_DIR=$work/data "$moesim" validate $mode --json - > "$work/rows-stdout.json"
  if cmp -s "$work/rows.json" "$work/rows-stdout.json" && grep -q '^# ' "$work/table.txt" && python3 -c "
import json
rows = json.load(open('$work/rows.json'))
base = {'source', 'scenario', 'metric', 'published_or_measured', 'predicted', 'error_pct'}
published = '$mode' == '--published'
for r in rows:
  if not published:
    assert set(r) == base, r
  else:  # a status, and a tolerance (figure rows) or a relation (claim rows); bounded rows their bound
    assert base < set(r) <= base | {'status', 'tolerance_pct', 'holds', 'bound'}, r
    assert r['status'] in ('reproduced', 'bounded', 'off') and ('tolerance_pct' in r) != ('holds' in r), r
    assert r['status'] != 'bounded' or set(r['bound']) & {'upper', 'lower'} and r['bound']['arithmetic'], r
assert rows
assert not published or {r['status'] for r in rows} == {'reproduced', 'bounded', 'off'}, rows
"; then ok; else bad "validate $mode --json FILE"; fi
done
expect_error 2 'nodir/rows.json": its directory .*/nodir does not exist' validate --published --json "$work/nodir/rows.json"

# --judge configs adds a table of medians over repeated runs: two leases of the same three records.
runs4=${runs/-run2\//-run4/}
if "$moesim" validate --measured "$runs" "$runs4" --judge configs --json "$work/configs.json" > "$work/configs.txt" &&
  grep -q '^# per config: median over repeated runs$' "$work/configs.txt" &&
  grep -qE '^# 6 records in 3 configs, mean \|time error\| ' "$work/configs.txt" && python3 -c "
import json
rows = [r for r in json.load(open('$work/configs.json')) if 'runs' in r]
assert sorted(r['metric'] for r in rows) == ['speedup_median'] * 2 + ['stack_ms_median'] * 3, rows
assert all(r['runs'] == 2 for r in rows), rows
"; then ok; else bad "validate --judge configs: per-config table and rows"; fi
expect_error 2 'judge: bogus not in \{records,configs\}' validate --measured "$runs" --judge bogus

# --steps: one step table per profiled record, whose predicted column adds up to the record's predicted stack
# time (the steps are gaps between consecutive events on one stream); --json gains one row per step.
if "$moesim" validate --measured "$runs" --steps --json "$work/steps.json" > "$work/steps.txt" &&
  [[ $(grep -c '^# op profile of ' "$work/steps.txt") == 3 ]] && python3 -c "
import json, re
text = open('$work/steps.txt').read()
predicted = [float(line.split()[7]) for line in text.splitlines() if line.startswith('  qwen3')]
sums = [float(m) for m in re.findall(r'^#   sum +\S+ +(\S+)', text, re.M)]
assert len(sums) == 3 and all(abs(a - b) < 2e-3 for a, b in zip(sums, predicted)), (sums, predicted)
rows = [r for r in json.load(open('$work/steps.json')) if r['metric'].startswith('step ')]
assert {r['metric'] for r in rows} >= {'step ATTN_CORE gpu_ms', 'step wait combine gpu_ms'}, rows
"; then ok; else bad "validate --steps: step tables and rows"; fi
expect_error 2 'steps.*applies only to --measured' validate --published --steps

# moesim bench runs the built programs it finds; stand-ins record their arguments and write a result file.
kernels="$work/kernels"
mkdir -p "$kernels"
for program in launch_bench layer_runner; do
  cat > "$kernels/$program" << 'S'
#!/usr/bin/env bash
echo "$*" > "$(dirname "$0")/$(basename "$0").args"
while [[ $# -gt 0 ]]; do [[ $1 == -J ]] && { echo '{"benchmark": "stand-in"}' > "$2"; }; shift; done
S
  chmod +x "$kernels/$program"
done
expect_error 2 'suite.*bogus.*expected one of gemm' bench --kernels-dir "$kernels" --suite bogus --out "$work/b.json"
expect_error 2 'layer-model.*nope.*neither a file nor a shipped model' bench --kernels-dir "$kernels" --suite layer \
  --layer-model nope --out "$work/b.json"
expect_error 2 'gemm_bench: suite .gemm. needs this program' bench --kernels-dir "$kernels" --suite gemm --out "$work/b.json"
if "$moesim" bench --kernels-dir "$kernels" --suite layer --gpus 4 --out "$work/b.json" > /dev/null &&
  grep -qE -- '--tokens 2048 .* -g 4 ' "$kernels/layer_runner.args" &&
  grep -qE -- '--model .*models/specs/qwen3-30b-a3b.json' "$kernels/layer_runner.args" &&
  python3 -c "import json; d = json.load(open('$work/b.json')); assert d['suites'] == [{'benchmark': 'stand-in'}]"; then
  ok
else
  bad "bench --suite layer runs layer_runner on the shipped model with -g and merges its JSON"
fi

# list impls: every shipped implementation profile, a line each with what it runs.
impls=$("$moesim" list impls)
for name in eager fused grouped hf-eager hf-grouped_mm; do
  if grep -qE "^$name: [a-zA-Z]" <<< "$impls"; then ok; else bad "list impls has no line for $name"; fi
done

# A step whose critical path is mostly the host's launches says so (the eager grouped stack at 2,048 tokens over
# two ranks, whose GPU waits on the launches); the fused runner's step is the GPU's.
host_bound=(simulate --model qwen3-30b-a3b --hw h100 --ep 2 --tokens 2048 --seq 2048 --layers 2 --phase forward)
if "$moesim" "${host_bound[@]}" --impl grouped | grep -qE '^# host-bound \(regular\): .* [5-9][0-9]% of the critical path'; then
  ok
else
  bad "a host-bound step is named host-bound"
fi
if "$moesim" "${host_bound[@]}" --impl fused | grep -q '^# host-bound'; then bad "the fused runner's step is not host-bound"; else ok; fi

echo "cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
