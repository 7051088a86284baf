#!/usr/bin/env bash
# Session 28's device call. On an H200 (the route table's card): campaign_r23a.sh (the `pair` and
# `.op` programs, qualified and timed) with 3/5 of the call, then campaign_r24a.sh (accuracy only)
# with the rest. On an H100 80GB HBM3 (132 SMs, as the H200): campaign_r24a.sh alone, whose accuracy
# records qualify sm_90a points (`measurements_db.aggregates.evidence_runs`); it times nothing.
# Usage: bash scripts/device/session28.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $GPU, $SMS SMs"
T0=$(date +%s); B=${1:-540}
case "$GPU" in
  *H200*) bash scripts/device/campaign_r23a.sh $(( B * 3 / 5 ))
          bash scripts/device/campaign_r24a.sh $(( B - ($(date +%s) - T0) )) ;;
  *H100*) [ "$SMS" = 132 ] || { echo "an H100 with $SMS SMs: its accuracy would not count; nothing measured"; exit 0; }
          bash scripts/device/campaign_r24a.sh $B ;;
  *) echo "neither an H200 nor an H100: nothing measured" ;;
esac
