#!/usr/bin/env bash
# Session 27's device call. On an H200 (the route table's card): campaign_r23a.sh, the `pair.*.wr`
# programs qualified and timed, then session26.sh (the small-forward probe and campaign_r22a) with
# what is left of the call. On an H100 (sessions 25 and 26 drew
# nothing else): the same programs against the routed ones at the two backward floor rows and the
# window's ends, with accuracy (the programs' numerics do not depend on the card), as evidence under
# $OUT that stays out of the store and the route table.
# Usage: bash scripts/device/session27.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in
  *H200*) T0=$(date +%s); B=${1:-560}
          bash scripts/device/campaign_r23a.sh $(( B * 3 / 5 ))
          bash scripts/device/session26.sh $(( B - ($(date +%s) - T0) )); exit 0 ;;
  *H100*) ;;
  *) echo "neither an H200 nor an H100: nothing measured"; exit 0 ;;
esac
# h23a (the session's first H100 call) is in bench/results/h100-2026-12-06c; a later H100 call runs h23b:
# the other widths at T 4096, T 8192 at two more, and the 2xfwd+bwd steps of the floor rows.
PREFIX=h23b; . scripts/device/campaign_begin.sh ${1:-560}
PW=bwd.pair.p2x.w8.pf.wr,bwd.pair.p2x.r2.w8.pf.wr,bwd.pair.p4x.r4.w4.pf.wr,bwd.pair.p2x.w8.pf.wr.sp,bwd.pair.p1x.w16.pf.wr,bwd.pair.p1x.w16.pf.wr.sp
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run pwr-rest --H 512,1536,5120 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-8k --H 2048,6144 --forms plain --w-dtypes fp32,bf16 --T 8192 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-steps --H 4096,8192 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops 2xfwd+bwd --step-fwd routed \
  --programs routed,$PW --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
campaign_end
