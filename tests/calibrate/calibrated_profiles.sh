#!/usr/bin/env bash
# The exact `moesim calibrate` commands that produce the committed calibrated profiles from the
# committed raw data (data/calibration/), run from the repository root.
#
#   tests/calibrate/calibrated_profiles.sh MOESIM OUT_DIR           write OUT_DIR/h100.calibrated.json, h200...
#   tests/calibrate/calibrated_profiles.sh MOESIM OUT_DIR --check   ... and compare them byte for byte with
#                                                                   hwprofiles/profiles/*.calibrated.json
# To refresh the committed profiles: remove them, then run with OUT_DIR=hwprofiles/profiles.
set -euo pipefail
moesim=$(realpath "$1")
out=$(realpath -m "$2")
check=${3:-}
cd "$(dirname "$0")/../.."
mkdir -p "$out"

h100=data/calibration/2026-11-21-nvidia-h100-x1
h200=data/calibration/2026-11-21-nvidia-h200-x4
held=data/calibration/2026-11-22-nvidia-h200-x4-held  # collectives timed from held streams; copy launch cost
power=data/calibration/2026-11-22-nvidia-h200-power   # GEMMs with their NVML clock; power_bench (power model)
power4=data/calibration/2026-11-22-nvidia-h200-x4-power  # power_bench on 4 GPUs with peer-copy loads (fabric energy)
eager=data/calibration/2026-11-22-nvidia-h200-eager  # launch_bench with layer kernels eager vs graph
hbm=data/calibration/2026-11-22-nvidia-h200-x2-hbm  # contention_bench with HBM-bound kernels (streaming add, causal softmax)
sizes=data/calibration/2026-11-22-nvidia-h200-x4-contention-sizes  # GEMMs of 15 us to 0.6 ms beside NCCL
router=data/calibration/2026-11-22-nvidia-h200-x4-router  # the runner's top-k and RMSNorm beside NCCL
h100ra=data/calibration/2026-11-22-nvidia-h100-router-attn  # attention projections at 512-8192 tokens; router alone
h200ra=data/calibration/2026-11-22-nvidia-h200-router-attn
x8=data/calibration/2026-11-22-nvidia-h200-x8  # collectives and contention on 8 GPUs
launch24=data/calibration/2026-11-24-nvidia-h200-launch  # launch_bench again: a second eager_host_gemm
tile=data/calibration/2026-11-26-nvidia-h100-tilegemm  # FlashMoE's GEMM tile task (tile_gemm_bench)
# torch SDPA at 16/32/64 sequences x heads (equal work), timed with the stream held (no host issue time)
sdpa100=data/calibration/2026-11-27-nvidia-h100-sdpa-held
sdpa200=data/calibration/2026-11-27-nvidia-h200-sdpa-held
# torch index_add_ against a dense add: the GPU's bf16 atomic-add rate
index100=data/calibration/2026-11-27-nvidia-h100-index-add
index200=data/calibration/2026-11-27-nvidia-h200-index-add-sdpa
# flex_attention through sliding and chunked windows and in full: the fused kernel's cost of a row of queries
window200=data/calibration/2026-11-30-nvidia-h200-window-attention
rm -f "$out/h100.calibrated.json" "$out/h200.calibrated.json"
"$moesim" calibrate --base hwprofiles/profiles/h100.json --out "$out/h100.calibrated.json" \
  --from data/calibration/2026-11-21-nvidia-h100-gemm/gemm_first.json $h100ra/gemm_attn.json $h100/grouped_gemm.json $h100/attention.json $sdpa100/sdpa-h16.json $sdpa100/sdpa-h32.json $sdpa100/sdpa-h64.json $h100/memory.json \
         $h100/contention1.json $h100ra/router1_topk_*.json $h100/launch.json $tile/tile_gemm.json \
         $index100/index-add-1.json $index100/index-add-2.json
"$moesim" calibrate --base hwprofiles/profiles/h200.json --out "$out/h200.calibrated.json" \
  --from $power/gemm_first.json $h200ra/gemm_attn.json $power/power.json $power4/power4.json $h200/grouped_gemm.json $h200/attention.json $sdpa200/sdpa-h*.json $h200/memory.json \
         $held/collectives2.json $held/collectives4.json $x8/collectives8.json $h200/contention2.json $h200/contention4.json \
         $x8/contention8.json \
         $h200/contention4_priority.json $hbm/contention2.json $sizes/contention4_gemm_*.json \
         $h200ra/router1_topk_*.json $router/contention4_topk_*.json $router/contention4_norm*.json $h200/launch.json $h200/launch_call2.json $held/launch.json \
         $eager/launch.json $launch24/launch.json $index200/index-add-h200.json $window200/window.json

if [[ "$check" == "--check" ]]; then
  status=0
  for name in h100 h200; do
    if cmp "$out/$name.calibrated.json" "hwprofiles/profiles/$name.calibrated.json"; then
      echo "calibrated_profiles: $name.calibrated.json reproduced byte for byte"
    else
      diff "$out/$name.calibrated.json" "hwprofiles/profiles/$name.calibrated.json" | head -20
      status=1
    fi
  done
  exit $status
fi
