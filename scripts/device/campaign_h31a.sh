#!/usr/bin/env bash
# Accuracy only, on any sm_90a card with 132 SMs (an H100 80GB HBM3 counts for the H200's table:
# measurements_db.aggregates.evidence_runs): what campaign_r23a.sh's remaining units need, so that an
# H200 call can time them with --inputs-per-family 0. Session 30 qualified the `pair` programs at
# T 4096 (every H) and at T 256/1024 for H <= 2048 (bench/results/h100-2026-12-07); this takes
# T 1024 at H 4096-8192 (its H 4096 BF16 unit stopped at 30 inputs), T 8192/16384 (where the `pair`
# window ends: on the H100 in session 27 in budget at 8192, 0.94-1.35 at 16384) and the residual
# form at H 6144. A unit cut short qualifies nothing (inputs do not add up over runs), so the units
# are small and ordered by what they unblock.
# Ran in session 31 on an H100 80GB HBM3 (all three units whole: bench/results/h100-2026-12-07b).
# Usage: bash scripts/device/campaign_h31a.sh [SECONDS]
. scripts/device/accuracy_card.sh
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=h31a; . scripts/device/campaign_begin.sh ${1:-400}
. scripts/device/pair_programs.sh
A="--ops bwd --programs routed,$PW --peers none --sessions 1 --accuracy-only --inputs-per-family 120"
run acc-down-hi --H 4096,5120,6144,8192 --forms plain --w-dtypes bf16,fp32 --T 1024 $A --wave-units 4
run acc-up --forms plain --w-dtypes bf16,fp32 --T 8192,16384 $A --wave-units 4
run acc-res --H 6144 --forms residual --w-dtypes bf16,fp32 --T 4096,8192,16384 $A --wave-units 2
campaign_end
