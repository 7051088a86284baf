#!/usr/bin/env bash
# Session 26's device call: on an H200 only (the route table's card; session 25 drew 18 H100s),
# first small_fwd_probe.py at the forward T <= 256 target's rows (about 90 s; on the H100 it ruled
# out instruction fetch and the flush-kernel switch, and the H200 is where the row is short), then
# campaign_r22a.sh with what is left of the call's budget. On any other card nothing is measured.
# Usage: bash scripts/device/session26.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
export PYTHONPATH=$PWD
T0=$(date +%s); BUDGET=${1:-560}
P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
timeout 150 python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
  --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 \
  > $OUT/small-fwd-probe.log 2>&1
grep -v '^{' $OUT/small-fwd-probe.log | tail -60
LEFT=$(( BUDGET - ($(date +%s) - T0) ))
bash scripts/device/campaign_r22a.sh $LEFT
