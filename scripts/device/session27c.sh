#!/usr/bin/env bash
# Session 27's third kind of device call: on an H200, session27.sh (campaign_r23a, then session26.sh);
# on an H100, the `.op` programs (the wide reduce's kernel in one step of up to 512 partial rows,
# runner.one_pass_reduce_meta): the four compute-sanitizer tools at the odd shapes, their time beside
# their `.wr` twins (timing only: their dw differs from the twin's only in the FP64 summation order),
# and ncu of their reduce at H 4096 FP32 T 4096.
# Usage: bash scripts/device/session27c.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) exec bash scripts/device/session27.sh "${1:-540}" ;; esac
PREFIX=h23c; . scripts/device/campaign_begin.sh ${1:-540}
T0=$(date +%s)
P=.op
python3 scripts/device/sanitize.py --programs $P --procs 14 > $W/sanitize-op-warm.log 2>&1
for tool in memcheck initcheck synccheck racecheck; do
  extra=""; [ $tool = racecheck ] && extra="--racecheck-report hazard"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool $tool $extra --error-exitcode 9 \
    python3 scripts/device/sanitize.py --programs $P > $W/sanitize-op-$tool.log 2>&1
  echo "$tool rc=$? $(grep -c '^ran ' $W/sanitize-op-$tool.log) runs, $(( $(date +%s) - T0 )) s"; tail -1 $W/sanitize-op-$tool.log
done
OPW=bwd.pair.p2x.w8.pf.wr,bwd.pair.p2x.r2.w8.pf.wr,bwd.pair.p1x.w16.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.pair.p2x.w8.pf.op,bwd.pair.p2x.r2.w8.pf.op,bwd.pair.p1x.w16.pf.op,bwd.twosum_pair.p2x.w4.fw.pf.op,bwd.twosum_pair.p1x.w16.fw.pf.op
Z="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers none --ops bwd --forms plain"
run op-4k --H 2048,4096,8192 --w-dtypes fp32,bf16 --T 4096 --programs routed,$OPW $Z --wave-units 6
run op-more --H 4096,8192 --w-dtypes fp32 --T 1024,16384,65536 --programs routed,$OPW $Z --wave-units 6
Q=bwd.pair.p2x.w8.pf.op,bwd.pair.p2x.w8.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.op
timeout 100 ncu --kernel-name regex:"rmsnorm_bwd|reduce_partials" --section SpeedOfLight --section Occupancy \
  --section LaunchStats --section WarpStateStats --csv --page details \
  python3 scripts/device/ncu_bwd.py --H 4096 --T 4096 --programs $Q > $OUT/ncu-op-4096-4096-fp32.csv 2> $W/ncu-op.log
echo "ncu rc=$? $(wc -l < $OUT/ncu-op-4096-4096-fp32.csv) lines"; gzip $OUT/ncu-op-4096-4096-fp32.csv
campaign_end
