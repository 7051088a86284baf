#!/usr/bin/env bash
# Session 27's device call. On an H200 (the route table's card): campaign_r23a.sh, the `pair.*.wr`
# programs qualified and timed (nothing else fits one call). On an H100 (sessions 25 and 26 drew
# nothing else): the same programs against the routed ones at the two backward floor rows and the
# window's ends, with accuracy (the programs' numerics do not depend on the card), as evidence under
# $OUT that stays out of the store and the route table.
# Usage: bash scripts/device/session27.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in
  *H200*) exec bash scripts/device/campaign_r23a.sh ${1:-560} ;;
  *H100*) ;;
  *) echo "neither an H200 nor an H100: nothing measured"; exit 0 ;;
esac
PREFIX=h23a; . scripts/device/campaign_begin.sh ${1:-560}
PW=bwd.pair.p2x.w8.pf.wr,bwd.pair.p2x.r2.w8.pf.wr,bwd.pair.p2x.w8.pf.wr.sp,bwd.pair.p1x.w16.pf.wr,bwd.pair.p1x.w16.pf.wr.sp
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run pwr-floor --H 4096,8192 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops bwd \
  --programs routed,$PW,bwd.pair.p2x.w8.pf --peers none $Q --wave-units 4
run pwr-wide --H 2048,6144 --forms plain --w-dtypes fp32 --T 4096 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-up --H 4096,8192 --forms plain --w-dtypes fp32 --T 8192,16384 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
campaign_end
