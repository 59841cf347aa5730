#!/usr/bin/env bash
# A sweep run as 4 shards (as a Slurm job array would) and merged must equal one unsharded run byte for
# byte; merging an incomplete set must fail with exit 2 and say what is missing; a shard present in two
# directories (rerun) merges once.
set -u
moesim=$1
work=$2/sweep_shard
rm -rf "$work" && mkdir -p "$work"
cat > "$work/sweep.json" << 'J'
{ "schema_version": 1,
  "base": { "model": "deepseek-v2-lite", "hw": "mi325x", "phase": "train", "ep": 8, "layers": 2, "seq": 1024,
            "routing": "uniform" },
  "axes": { "schedule": ["regular", "farskip"], "tokens": { "from": 1024, "to": 24576, "step": 1024 } },
  "filter": ["tokens != 5120"] }
J
fail() { echo "FAIL: $*"; exit 1; }
for ext in csv jsonl; do
  "$moesim" sweep "$work/sweep.json" --jobs 2 --out "$work/full.$ext" > /dev/null 2>&1 || fail "full run ($ext)"
  for k in 1 2 3 4; do
    mkdir -p "$work/$ext/task-$k"
    "$moesim" sweep "$work/sweep.json" --jobs 2 --shard "$k/4" --out "$work/$ext/task-$k/part.$ext" > /dev/null 2>&1 ||
      fail "shard $k/4 ($ext)"
  done
  "$moesim" sweep merge "$work/merged.$ext" "$work"/$ext/task-* > /dev/null 2>&1 || fail "merge ($ext)"
  cmp -s "$work/full.$ext" "$work/merged.$ext" || { diff "$work/full.$ext" "$work/merged.$ext" | head; fail "merged $ext differs"; }
done
# 46 points (2 schedules x 24 tokens values, less tokens=5120 for both) in 4 interleaved shards: 12, 12, 11, 11 rows.
rows=$(for k in 1 2 3 4; do echo $(($(wc -l < "$work/csv/task-$k/part.csv") - 1)); done | tr '\n' ' ')
[[ $rows == "12 12 11 11 " ]] || fail "shard sizes are $rows, expected 12 12 11 11"

# Incomplete: shard 3 missing.
out=$("$moesim" sweep merge "$work/partial.csv" "$work"/csv/task-1 "$work"/csv/task-2 "$work"/csv/task-4 2>&1)
[[ $? -eq 2 && $out == *"shard 3/4 is missing"* ]] || fail "incomplete merge: $out"
[[ ! -e "$work/partial.csv" ]] || fail "an incomplete merge wrote its output"
# A rerun of shard 2 elsewhere is a duplicate, not a conflict.
mkdir -p "$work/rerun" && cp "$work"/csv/task-2/part.csv* "$work/rerun/"
"$moesim" sweep merge "$work/dup.csv" "$work"/csv/task-* "$work/rerun" > "$work/dup.log" 2>&1 || fail "merge with a rerun shard"
grep -q "12 duplicate rows dropped" "$work/dup.log" || fail "duplicates not counted: $(cat "$work/dup.log")"
cmp -s "$work/full.csv" "$work/dup.csv" || fail "merge with a rerun shard differs"
# A conflicting row for one point is refused.
sed -i '2s/,ok,\([0-9]\)/,ok,9\1/' "$work/rerun/part.csv"
out=$("$moesim" sweep merge "$work/conflict.csv" "$work"/csv/task-* "$work/rerun" 2>&1)
[[ $? -eq 2 && $out == *"differs from its row in"* ]] || fail "conflicting rows: $out"
# Bad shard specs.
for bad in 0/4 5/4 2 a/b 1/0; do
  out=$("$moesim" sweep "$work/sweep.json" --shard "$bad" --out "$work/bad.csv" 2>&1)
  [[ $? -eq 2 && $(echo "$out" | wc -l) -eq 1 ]] || fail "--shard $bad: $out"
done
echo "sweep shard/merge: 1 passed, 0 failed"
