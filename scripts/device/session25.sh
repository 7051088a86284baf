#!/usr/bin/env bash
# Session 25's device call, whichever card comes: the kernels' GPU tests (among them the
# cooperative-grid refusal and capture tests), then on an H200 campaign_r22a.sh; on any other card
# nothing more (the launch-bound forward probe, small_fwd_probe.py, ran on an H100 this session).
# Usage: bash scripts/device/session25.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
export PYTHONPATH=$PWD
T0=$(date +%s); BUDGET=${1:-560}
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/cake_kernels 2>&1 | grep -E "^E |Error|passed|failed" | head -30
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
case "$GPU" in
  *H200*) bash scripts/device/campaign_r22a.sh $LEFT ;;
esac
