#!/usr/bin/env bash
# Session 27's later device calls: on an H200, session27.sh (campaign_r23a, then session26.sh); on an
# H100, what does not depend on the card for the new `bwd.pair.*.wr` programs: the four
# compute-sanitizer tools at the odd shapes (sanitize.py), and ncu of their kernels at the backward
# floor row (H 4096 FP32 T 4096) beside the routed compensated program.
# Usage: bash scripts/device/session27b.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) exec bash scripts/device/session27.sh "${1:-540}" ;; esac
export PYTHONPATH=$PWD
P=bwd.pair.p2x.w8.pf.wr,bwd.pair.p2x.r2.w8.pf.wr,bwd.pair.p4x.r4.w4.pf.wr,bwd.pair.p1x.w16.pf.wr
T0=$(date +%s)
python3 scripts/device/sanitize.py --programs $P --procs 14 > $OUT/sanitize-warm.log 2>&1
echo "warm rc=$? $(( $(date +%s) - T0 )) s"
for tool in memcheck initcheck synccheck racecheck; do
  extra=""; [ $tool = racecheck ] && extra="--racecheck-report hazard"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool $tool $extra --error-exitcode 9 \
    python3 scripts/device/sanitize.py --programs $P > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(grep -c '^ran ' $OUT/sanitize-$tool.log) runs, $(( $(date +%s) - T0 )) s"; tail -2 $OUT/sanitize-$tool.log
done
gzip $OUT/sanitize-*.log
Q=bwd.pair.p2x.w8.pf.wr,bwd.pair.p1x.w16.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.pair.p2x.w8.pf
timeout 120 ncu --kernel-name regex:"rmsnorm_bwd|reduce_partials" --section SpeedOfLight --section Occupancy \
  --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --csv --page details \
  python3 scripts/device/ncu_bwd.py --H 4096 --T 4096 --programs $Q > $OUT/ncu-pair-wr-4096-4096-fp32.csv 2> $OUT/ncu.err
echo "ncu rc=$? $(wc -l < $OUT/ncu-pair-wr-4096-4096-fp32.csv) lines"; grep -v "^==PROF==" $OUT/ncu.err | tail -3
gzip $OUT/ncu-pair-wr-4096-4096-fp32.csv
