#!/usr/bin/env bash
# Renders generated reports in headless Chromium: the page must not be blank, each schedule's SVG timeline
# must have one lane per stream (plus the host thread) of every rank it shows, and a step's pipeline
# section one row per stage. Reruns must be
# byte-identical.
set -u
moesim=$1
work=$2/browser
rm -rf "$work" && mkdir -p "$work"
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "FAIL: no chromium; scripts/test installs it (scripts/install-deps --with-browser)"
  exit 1
fi
failed=0
check_report() {  # name, expected lanes, simulate args...
  local name=$1 lanes=$2; shift 2
  "$moesim" simulate "$@" --report "$work/$name" > /dev/null || { echo "FAIL: $name: simulate"; failed=1; return; }
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2000 \
    --screenshot="$work/$name.png" "file://$work/$name/index.html" > /dev/null 2>&1
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$work/$name/index.html" \
    > "$work/$name.dom" 2> /dev/null
  python3 - "$work/$name.png" << 'P' || { echo "FAIL: $name: blank or missing screenshot"; failed=1; }
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    length, kind = struct.unpack('>I4s', data[pos:pos + 8])
    if kind == b'IDAT':
        idat += data[pos + 8:pos + 8 + length]
    pos += 12 + length
raw = zlib.decompress(idat)
# A blank page is one colour: its filtered scanlines are nearly all zero bytes (measured: 4 distinct values,
# 0.03% non-zero). A rendered report has text, tables and bars (measured: 256 distinct, 1.4% non-zero).
distinct = len(set(raw))
nonzero = sum(1 for b in raw[::97] if b) / len(raw[::97])
assert distinct > 64 and nonzero > 0.003, (distinct, nonzero)
P
  local got
  got=$(grep -o 'class="lane"' "$work/$name.dom" | wc -l)
  if [[ $got -ne $lanes ]]; then echo "FAIL: $name: $got lanes in the rendered DOM, want $lanes"; failed=1; fi
  "$moesim" simulate "$@" --report "$work/$name.again" > /dev/null
  for f in index.html summary.md trace.json; do
    cmp -s "$work/$name/$f" "$work/$name.again/$f" || { echo "FAIL: $name: $f differs on rerun"; failed=1; }
  done
}
base=(--model deepseek-v2-lite --hw mi325x --phase train --ep 8 --mbs 1 --seq 4096 --layers 4)
# Two schedules, one representative rank each: host + compute + comm = 3 lanes per schedule.
check_report symmetric 6 "${base[@]}" --schedule farskip --compare regular
# Uneven routing simulates all 8 ranks; the timeline shows 4 of them: 4 x 3 lanes.
check_report per_rank 12 "${base[@]}" --schedule farskip --routing zipf:1.1
# A 1F1B step on 2 stages: the layer timeline shows both stages' ranks (host, compute, comm, p2p: 2 x 4
# lanes), and the pipeline section one timeline row per stage.
check_report pipeline 8 --model qwen3-30b-a3b --hw h100 --phase train --ep 4 --pp 2 --micro-batches 4 --layers 4
stages=$(grep -o 'class="stage"' "$work/pipeline.dom" | wc -l)
if [[ $stages -ne 2 ]]; then echo "FAIL: pipeline: $stages stage rows in the rendered DOM, want 2"; failed=1; fi
[[ $failed -eq 0 ]] && echo "report browser: 3 passed, 0 failed"
exit $failed
