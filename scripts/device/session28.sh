#!/usr/bin/env bash
# Session 28's device calls. On an H200 (the route table's card): campaign_r23a.sh (the `pair` and
# `.op` programs, qualified and timed) with 3/5 of the call, then the accuracy-only round with the
# rest. On an H100 80GB HBM3 (132 SMs, as the H200): the accuracy-only round alone, whose records
# qualify sm_90a points (`measurements_db.aggregates.evidence_runs`); it times nothing.
# The accuracy-only round: campaign_r24a.sh (call 5, done: bench/results/h100-2026-12-06d), then
# campaign_r24b.sh (its T 1M unit, which ran out of the H100's memory).
# Usage: bash scripts/device/session28.sh [SECONDS] [ACCURACY_SCRIPT]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $GPU, $SMS SMs"
T0=$(date +%s); B=${1:-540}; ACC=${2:-scripts/device/campaign_r24b.sh}
case "$GPU" in
  *H200*) bash scripts/device/campaign_r23a.sh $(( B * 3 / 5 ))
          bash $ACC $(( B - ($(date +%s) - T0) )) ;;
  *H100*) [ "$SMS" = 132 ] || { echo "an H100 with $SMS SMs: its accuracy would not count; nothing measured"; exit 0; }
          bash $ACC $B ;;
  *) echo "neither an H200 nor an H100: nothing measured" ;;
esac
