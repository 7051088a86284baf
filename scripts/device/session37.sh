#!/usr/bin/env bash
# Session 37's device calls. The `f64_pair` / `f64` backwards (dw summed in FP64 from exact
# products, session 36) go first on any card, since they are the best chance at three unmet
# targets and have never run on a GPU:
# on an H200 (the route table's card), campaign_r36a.sh (timed and qualified beside the routed
# programs at the binding rows) with most of the call, then session35.sh's H200 queue in the rest;
# on another card, session36.sh (variant_probe of the same programs, then their GPU tests).
# Usage: bash scripts/device/session37.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r36a.sh $(( B - 60 ))
          L=$(( B - ($(date +%s) - T0) )); [ $L -gt 60 ] && exec bash scripts/device/session35.sh $L
          exit 0 ;;
esac
exec bash scripts/device/session36.sh "$B"
