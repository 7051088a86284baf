#!/usr/bin/env bash
# Session 26's later device call: on an H200, session26.sh (small_fwd_probe, then campaign_r22a);
# on another card, ncu of our backwards at the backward floor's new binding row (H 4096 FP32 T 4096,
# 0.914x QuACK), whose occupancy, DRAM throughput and warp stalls do not depend on the card as much
# as its time does. Usage: bash scripts/device/session26b.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) exec bash scripts/device/session26.sh "${1:-540}" ;; esac
export PYTHONPATH=$PWD
P=bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.pair.p2x.w8.pf,bwd.twosum_pair.p4x.w4.fw.pf.wr
timeout $(( ${1:-540} - 20 )) ncu --kernel-name regex:rmsnorm_bwd --section SpeedOfLight --section Occupancy \
  --section LaunchStats --section WarpStateStats --csv --page details \
  python3 scripts/device/ncu_bwd.py --H 4096 --T 4096 --programs $P > $OUT/ncu-bwd-4096-4096-fp32.csv 2> $OUT/ncu-bwd.err
echo "ncu rc=$? $(wc -l < $OUT/ncu-bwd-4096-4096-fp32.csv) lines"; grep -v "^==PROF==" $OUT/ncu-bwd.err | tail -3
