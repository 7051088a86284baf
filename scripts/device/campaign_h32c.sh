#!/usr/bin/env bash
# Accuracy only, on any sm_90a card with 132 SMs (an H100 80GB HBM3 counts for the H200's table:
# measurements_db.aggregates.evidence_runs): the narrow multi-row `.xs.sr.tma` backwards (session 32)
# at the copy target's rows, contiguous heads H 256 and plain H 512, so that campaign_r32a.sh's
# tma-narrow units can time them on an H200 with --inputs-per-family 0. A unit cut short qualifies
# nothing (inputs do not add up over runs), so the units are small and ordered by what they unblock.
# (Session 32 qualified the H 1536 `.tma` programs of campaign_r32a.sh's first unit on an H100.)
# Ran in session 32 on an H100 80GB HBM3, every unit whole (bench/results/h100-2026-12-07c).
# Usage: bash scripts/device/campaign_h32c.sh [SECONDS]
. scripts/device/accuracy_card.sh
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=h32c; . scripts/device/campaign_begin.sh ${1:-300}
B=bwd.twosum_pair
NARROW=$B.p16x.r2.w1.s4.wr.xs.sr.tma,$B.p12x.r2.w1.s6.wr.xs.sr.tma,$B.p5x.r4.w2.s4.wr.xs.sr.tma,$B.p4x.r4.w2.s6.wr.xs.sr.tma
A="--ops bwd --programs $NARROW --peers none --sessions 1 --accuracy-only --inputs-per-family 120"
run acc-hc-64k --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536 $A --wave-units 2
run acc-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 16384,65536,262144 $A --wave-units 3
run acc-hc --forms heads_contiguous --w-dtypes bf16,fp32 --T 16384,262144 $A --wave-units 2
run acc-512-1m --H 512 --forms plain --w-dtypes bf16,fp32 --T 1048576 $A --wave-units 2
campaign_end
