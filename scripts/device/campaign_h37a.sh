#!/usr/bin/env bash
# Session 37, any sm_90a card with 132 SMs (an H100 80GB HBM3 counts for the H200's table's accuracy:
# measurements_db.aggregates.evidence_runs). Accuracy only (120 inputs per family, both weights) of
# the `f64_pair` backwards that session 37's variant probes on an H100 found faster than the routed
# program at the rows of two unmet targets, so that an H200 can time them with --inputs-per-family 0:
# contiguous heads H 256 (the copy target's row; `p16x.r2.w1.pf.wr.sr.fl` 1.21x the routed program at
# BF16 T 65536) and plain H 8192 (the floor target's row, BF16 T 4096; `p1x.w16.pf.wr` 1.17x).
# Usage: bash scripts/device/campaign_h37a.sh [SECONDS]
. scripts/device/accuracy_card.sh
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=h37a; . scripts/device/campaign_begin.sh ${1:-400}
F=bwd.f64_pair
A="--ops bwd --peers none --sessions 1 --accuracy-only --inputs-per-family 120 --w-dtypes bf16,fp32 --wave-units 2"
run acc-hc --H 256 --forms heads_contiguous --T 65536,262144,1048576 $A \
  --programs $F.p16x.r2.w1.pf.wr.sr.fl,$F.p12x.r2.w1.pf.wr.sr.fl
run acc-8192 --H 8192 --forms plain --T 4096,16384,65536 $A --programs $F.p1x.w16.pf.wr,$F.p1x.w8.s6.wr.tmc
campaign_end
