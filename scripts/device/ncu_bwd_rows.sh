#!/usr/bin/env bash
# ncu at the card's own clocks (`--clock-control none`) of backward implementations at plain rows,
# BF16 weight, T 65536: one ncu run per hidden size, each implementation's timed call once in a
# profiler range (scripts/device/ncu_compare.py). Writes $OUT/ncu-bwd-<H>-65536-bf16.csv and .err.
# Usage: bash scripts/device/ncu_bwd_rows.sh SECONDS_PER_H "H impl,impl,..." ["H impl,..." ...]
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
NCU="ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --csv --page details"
S=$1; shift
for spec in "$@"; do
  set -- $spec
  timeout "$S" $NCU python scripts/device/ncu_compare.py --op bwd --H $1 --T 65536 --w-dtype bf16 \
    --form plain --impls $2 > $OUT/ncu-bwd-$1-65536-bf16.csv 2> $OUT/ncu-bwd-$1.err
  echo "ncu H $1: rc=$?"; grep -E '^(profiled|skipped)' $OUT/ncu-bwd-$1-65536-bf16.csv
  tail -3 $OUT/ncu-bwd-$1.err
done
