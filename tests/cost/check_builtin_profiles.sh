#!/usr/bin/env bash
# The shipped eager/grouped profiles are what make_builtins.py writes from the committed measurements, byte for
# byte: a profile edited by hand, or a measurement changed without regenerating, fails here.
set -eu
root=$1 out=$2
cal=$root/data/calibration
rm -rf "$out" && mkdir -p "$out"
python3 "$root/cost/implementations/make_builtins.py" "$cal/2026-11-26-cpu-torch-dispatch/dispatch.json" \
  "$cal/2026-11-21-nvidia-h100-x1/launch.json" "$cal"/2026-11-26-nvidia-h200-x4-host-costs/host-costs-*.json \
  "$cal"/2026-11-27-nvidia-h200-x4-step-context/c*.json "$cal"/2026-11-27-nvidia-h200-x2-collective-context/collective-context-*.json \
  "$cal"/2026-11-27-nvidia-h200-x2-op-context/op-context-*.json "$cal"/2026-11-27-nvidia-h200-x4-ep-path/op-context-*.json \
  "$cal"/2026-11-27-nvidia-h100-index-add/index-add-*.json \
  "$cal"/2026-11-27-nvidia-h*-elementwise-paths/elementwise-paths-*.json \
  "$cal"/2026-11-27-nvidia-h200-x4-host-jitter/host-jitter-*.json \
  "$cal/2026-11-28-nvidia-h200-torch-grouped-mm-2/grouped_mm.json" \
  "$cal"/2026-11-29-nvidia-h200-graph-free/graph-free-cuda-*.json "$out"
for name in eager grouped hf-eager hf-grouped_mm; do
  diff -q "$root/cost/implementations/$name.json" "$out/$name.json" ||
    { echo "cost/implementations/$name.json differs from make_builtins.py's output (see its docstring)"; exit 1; }
done
