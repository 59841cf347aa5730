#!/bin/bash
# The device call that made this folder (run from the repository root; OUT is the call's output folder).
# transformers' MoE models traced as a user traces them: `profile(with_stack=True)`, no moesim ranges
# (run --plain-trace), and the same configurations traced with moesim's ranges (annotate) beside them.
set -u
NM=data/torch-stacks/2026-11-29-nvidia-h200-x1-newmodels
D=$OUT/pl
mkdir -p "$D/models" "$D/plain" "$D/annotated"
cp "$NM"/models/*.json "$D/models/"
nvidia-smi -q -d CLOCK,PERFORMANCE > "$D/system.txt" 2>&1
cd kernels && export PYTHONPATH=.
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" \
  >> "$D/system.txt" 2>&1
start=$SECONDS
one() {  # model style phase tokens seq out-subdir [--plain-trace]
  local m=$1 st=$2 ph=$3 tk=$4 sq=$5 sub=$6; shift 6
  if (( SECONDS - start > BUDGET_S )); then echo "skipped $m $st $ph $tk $sub: budget" >> "$D/summary.txt"; return; fi
  local specs=(); [[ $m != qwen3-30b-a3b ]] && specs=(--specs "$D/models")
  python3 -m torch_stacks.run --model $m "${specs[@]}" --style $st --phase $ph --tokens $tk --seq $sq --layers 2 \
    --trace-iters 1 "$@" --out "$D/$sub" >> "$D/run.log" 2>&1
  tail -n 3 "$D/run.log" | grep -E " ok | failed |traced|not traced" >> "$D/summary.txt"
}
for m in olmoe-1b-7b qwen1.5-moe-a2.7b qwen3-30b-a3b; do for st in hf-eager hf-grouped_mm; do
  one $m $st train 2048 2048 plain --plain-trace
done; done
for m in olmoe-1b-7b qwen1.5-moe-a2.7b; do for st in hf-eager hf-grouped_mm; do
  one $m $st train 2048 2048 annotated
done; done
for m in olmoe-1b-7b qwen1.5-moe-a2.7b qwen3-30b-a3b; do for st in hf-eager hf-grouped_mm; do
  one $m $st forward 2048 2048 plain --plain-trace
done; done
# What the Python tracer's events look like (for the reader), from the first plain trace
python3 - "$D/plain" > "$D/format.txt" 2>&1 <<'PY'
import collections, glob, gzip, json, sys
path = sorted(glob.glob(sys.argv[1] + "/*train*.trace.json.gz"))[0]
ev = json.load(gzip.open(path))["traceEvents"]
print(path, len(ev), collections.Counter(e.get("cat") for e in ev).most_common())
mods = [e for e in ev if e.get("cat") == "python_function" and e.get("name", "").startswith("nn.Module")]
print(len(mods), "module events; first 60:")
for e in mods[:60]:
    print(json.dumps(e))
print("user_annotation:", collections.Counter(e["name"] for e in ev if e.get("cat") == "user_annotation"))
other = [e for e in ev if e.get("cat") == "python_function"][:20]
for e in other:
    print(json.dumps(e))
PY
# Does with_modules=True alone (no with_stack) give module events too?
python3 - >> "$D/format.txt" 2>&1 <<'PY'
import collections, json, os, tempfile, torch
from torch.profiler import ProfilerActivity, profile
m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64)).cuda()
x = torch.randn(8, 64, device="cuda")
for kw in ({"with_modules": True}, {"with_stack": True}):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kw) as p:
        m(x)
    path = os.path.join(tempfile.mkdtemp(), "t.json")
    p.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    print(kw, collections.Counter(e.get("cat") for e in ev).most_common(),
          [e["name"] for e in ev if e.get("name", "").startswith("nn.Module")])
PY
cd "$OUT" && tar czf pl.tgz pl && rm -rf pl
