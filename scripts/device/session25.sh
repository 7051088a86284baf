#!/usr/bin/env bash
# Session 25's device call, whichever card comes: the kernels' GPU tests (among them the
# cooperative-grid refusal and capture tests), then on an H200 campaign_r22a.sh; on any other card
# nothing (the tests passed on an H100 this session; CAKE_ANY_GPU=1 runs them there).
# Usage: bash scripts/device/session25.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
[ "${CAKE_ANY_GPU:-0}" = 1 ] || case "$GPU" in *H200*) ;; *) echo "not an H200: stopping (CAKE_ANY_GPU=1 runs the tests)"; exit 0 ;; esac
export PYTHONPATH=$PWD
T0=$(date +%s); BUDGET=${1:-560}
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/cake_kernels 2>&1 | grep -E "^E |Error|passed|failed" | head -30
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
case "$GPU" in
  *H200*) bash scripts/device/campaign_r22a.sh $LEFT ;;
esac
