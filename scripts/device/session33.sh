#!/usr/bin/env bash
# Session 33's device calls. On an H200 (the route table's card): session32.sh's queue, unchanged
# (campaign_r25a.sh, campaign_r32a.sh, small_fwd_probe.py, the rest of campaign_r23a.sh), after
# campaign_r33a.sh (the two-row reload backward at H 8192, 100 s).
# On another sm_90a card: ncu of the backward copy target's wide rows (plain H 5120 and 6144, BF16,
# T 65536: 79.6 % and 84.4 % of the H200's copy, 0.967x and 0.953x torch.compile), the routed program
# beside torch.compile's, at the card's own clocks, so the bounds text can say what holds them
# (DRAM share, issue, occupancy, local-memory traffic from the spills) from a profile, not from
# compile_check's register counts alone. What ncu reports per kernel does not depend on the H200's
# extra bandwidth for the questions asked here (registers, spills, stall reasons, achieved occupancy).
# Usage: bash scripts/device/session33.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r33a.sh 100
          exec bash scripts/device/session32.sh $(( B - ($(date +%s) - T0) )) ;;
esac
# Session 33 ran the ncu below on an H100 80GB HBM3 (call 1, bench/results/h100-2026-12-07d); kept
# for another card's run, skipped on a card that already has it (NCU_AGAIN=1 runs it anyway).
case "$GPU" in *H100*) [ "${NCU_AGAIN:-0}" = 1 ] || { echo "an H100: its ncu is in bench/results/h100-2026-12-07d; nothing queued"; exit 0; } ;; esac
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --csv --page details"
P=bwd.twosum_pair
for spec in "6144 $P.p2x.w8.fw.pf.wr.sp,$P.p2x.w8.fw.pf.wr.sp.xs,$P.p1x.w16.fw.pf.wr.sp" \
            "5120 $P.p2x.w8.fw.pf.wr.sp.xs,$P.p1x.w16.fw.pf.wr.sp"; do
  set -- $spec
  timeout $(( B / 2 - 20 )) $NCU python scripts/device/ncu_compare.py --op bwd --H $1 --T 65536 --w-dtype bf16 \
    --form plain --impls $2,peer.torch_compile.default > $OUT/ncu-bwd-$1-65536-bf16.csv 2> $OUT/ncu-bwd-$1.err
  echo "ncu H $1: rc=$?"; grep -E '^(profiled|skipped)' $OUT/ncu-bwd-$1-65536-bf16.csv
  tail -3 $OUT/ncu-bwd-$1.err
done
