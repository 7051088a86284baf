#!/usr/bin/env bash
# Session 25's device call, whichever card comes: the GPU tests of the cooperative-grid refusal
# (one of them inside a CUDA graph capture), then on an H200 campaign_r22a.sh, on any other card
# the launch-bound forward probe (small_fwd_probe.py: cold, code-warm, tiny-flush and hot).
# Usage: bash scripts/device/session25.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
export PYTHONPATH=$PWD
T0=$(date +%s); BUDGET=${1:-560}
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py -k "refused" 2>&1 | tail -4
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
case "$GPU" in
  *H200*) bash scripts/device/campaign_r22a.sh $LEFT ;;
  *)
    P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
    timeout $(( LEFT - 10 )) python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
      --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 2>&1 | grep -v '^{' | tail -80 ;;
esac
