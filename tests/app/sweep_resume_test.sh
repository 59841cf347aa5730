#!/usr/bin/env bash
# A 200-point sweep interrupted midway (SIGINT, then SIGKILL) and resumed must hold every point exactly
# once, with the same values as an uninterrupted run, byte for byte after completion.
set -u
moesim=$1
work=$2/sweep_resume
rm -rf "$work" && mkdir -p "$work"
cat > "$work/sweep.json" << 'J'
{ "schema_version": 1,
  "base": { "model": "deepseek-v2-lite", "hw": "mi325x", "phase": "train", "ep": 8, "layers": 3, "seq": 1024,
            "routing": "uniform" },
  "axes": { "schedule": ["regular", "farskip"], "tokens": { "from": 1024, "to": 102400, "step": 1024 } } }
J
"$moesim" sweep "$work/sweep.json" --jobs 2 --out "$work/full.csv" > /dev/null 2>&1 || { echo "FAIL: full run"; exit 1; }
[[ $(($(wc -l < "$work/full.csv") - 1)) -eq 200 ]] || { echo "FAIL: full run has $(wc -l < "$work/full.csv") lines"; exit 1; }

interrupt_after() {  # signal, rows to wait for
  "$moesim" sweep "$work/sweep.json" --jobs 2 --out "$work/cut.csv" --resume > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 600); do
    [[ -f "$work/cut.csv" && $(wc -l < "$work/cut.csv") -gt $2 ]] && break
    sleep 0.02
  done
  kill "-$1" "$pid" 2> /dev/null
  wait "$pid"
  echo "after SIG$1: $(($(wc -l < "$work/cut.csv") - 1)) rows"
}
interrupt_after INT 40
interrupt_after KILL 110
"$moesim" sweep "$work/sweep.json" --jobs 2 --out "$work/cut.csv" --resume > /dev/null 2>&1 || { echo "FAIL: resume"; exit 1; }
dupes=$(cut -d, -f1,2,3 "$work/cut.csv" | sort | uniq -d | wc -l)
if [[ $dupes -ne 0 ]]; then echo "FAIL: $dupes duplicate points"; exit 1; fi
if ! cmp -s "$work/full.csv" "$work/cut.csv"; then echo "FAIL: resumed results differ"; diff "$work/full.csv" "$work/cut.csv" | head; exit 1; fi
echo "sweep resume: 1 passed, 0 failed"
