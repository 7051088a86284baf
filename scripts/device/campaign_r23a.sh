#!/usr/bin/env bash
# H200 round 23a (session 27): the uncompensated `pair` programs with the wide reduce (`.wr`,
# registry.py), qualified and timed where they can be in budget. At T 4096 the serial-reduce `pair`
# programs are in budget (worst err/tol 0.405 at H 4096 FP32) but lose to their own reduce (57.7 us
# against the routed compensated 42.6; QuACK 38.9, the backward floor's binding row); on an H100 their
# rows kernel took 32.2 us against the compensated one's 45.5. Their error grows with rows per program,
# so T 8192 and 16384 bound their window from above and T 1024 from below.
# 1. pwr-4k: T 4096, every standard H, both weight dtypes (the floor rows: H 4096 FP32, H 8192 BF16).
# 2. pwr-steps: the 2xfwd+bwd steps at T 4096 (the step floor's binding row is H 4096 FP32 T 4096).
# 3. pwr-up: T 8192 and 16384, where the window ends (on the H100, session 27: in budget at 8192,
#    0.94-1.35 at 16384), with the residual form at H 6144.
# 4. pwr-down: T 256 and 1024 (on the H100 the routed column task lost 1.6-2.7x at T 1024 to the
#    `pair` and compensated persistent programs; the H200 table has no measured point there).
# On an H100 (session 27, bench/results/h100-2026-12-06c) the whole of this took about 2 minutes per
# 20 units with 120 inputs per family; `pair.p2x.w8.pf.wr` took 42.98 us at H 4096 FP32 T 4096
# against the routed 52.03, `pair.p1x.w16.pf.wr` 76.64 at H 8192 BF16 against 90.82.
# The `.op` twins (one reduce step; runner.one_pass_reduce_meta) ride along everywhere.
# Timings from a card that is not an H200 are not the route table's: this script then stops.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r23a; . scripts/device/campaign_begin.sh ${1:-560}
. scripts/device/pair_programs.sh
# Timing only since session 31: every unit's programs are qualified at its keys on a 132-SM card
# (accuracy only, 120 inputs per family: sessions 28 and 30 at T 256 and 4096, session 31's H100 at
# T 1024, 8192, 16384 and the residual H 6144, campaign_h31a.sh), which the solver counts for sm_90a.
Q="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
# Session 28's H200 call ran pwr-4k for H 512-6144 (bench/results/h200-2026-12-06b); H 8192 comes first now.
run pwr-4k-8192 --H 8192 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-steps --forms plain --w-dtypes fp32,bf16 --T 4096 --ops 2xfwd+bwd --step-fwd routed --programs routed,$PW \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
run pwr-up --forms plain --w-dtypes fp32,bf16 --T 8192,16384 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-res --H 6144 --forms residual --w-dtypes fp32,bf16 --T 4096,8192,16384 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-down --forms plain --w-dtypes fp32,bf16 --T 1024,256 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
run pwr-4k --H 512,1536,2048,4096,5120,6144 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops bwd --programs routed,$PW --peers none $Q --wave-units 4
campaign_end
