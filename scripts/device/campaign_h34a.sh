#!/usr/bin/env bash
# Session 34, any sm_90a card with 132 SMs (an H100 80GB HBM3 counts for the H200's table's accuracy:
# measurements_db.aggregates.evidence_runs). Accuracy only (120 inputs per family, both weights) of
# the `.tmc` backwards that session34.sh's variant probe found faster than the routed program, at the
# keys where they were, so that an H200 can time them with --inputs-per-family 0.
# Usage: [PREFIX=h34a] PROGS=name,name UNITS="H:T,T;H:T" bash scripts/device/campaign_h34a.sh [SECONDS]
# (PREFIX names the work folder and $OUT/$PREFIX.tar.gz; campaign_h35a.sh sets h35a.)
. scripts/device/accuracy_card.sh
[ -n "$PROGS" ] && [ -n "$UNITS" ] || { echo "PROGS and UNITS are required (see the header)"; exit 2; }
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=${PREFIX:-h34a}; . scripts/device/campaign_begin.sh ${1:-400}
A="--ops bwd --programs $PROGS --peers none --sessions 1 --accuracy-only --inputs-per-family 120"
IFS=';' read -ra U <<< "$UNITS"
for u in "${U[@]}"; do
  run "acc-${u%%:*}-$(echo ${u#*:} | tr , -)" --H ${u%%:*} --forms plain --w-dtypes bf16,fp32 --T ${u#*:} $A --wave-units 2
done
campaign_end
