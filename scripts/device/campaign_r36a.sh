#!/usr/bin/env bash
# H200 round 36a (session 36): the `f64_pair` backwards (dw summed in FP64 from exact products, no
# TwoSum; registry F64_SHAPES / F64_TMC_SHAPES), timed and qualified (120 inputs per family) beside
# the routed programs at the rows that bind three unmet targets. Never run on a GPU when written:
# session 36 had no device machine. What argues for them is static (Triton 3.6, sm_90a SASS,
# scripts/sass_paths.py, bench/results/cpu-2026-12-07-session36/sass-f64.md): their loop bodies are
# 0.40-0.65x the compensated programs' of the same shape (contiguous heads p16x.w1: 160 instructions
# against 402 for 8 elements a thread), where ncu had the routed heads kernel at 58 % of issue slots
# with 24 % occupancy, and the H 1536 compensated kernel issue-bound (71 %).
# 1. f64-hc: contiguous heads H 256, T 65536 and 262144 (the copy target's binding row, 69.6 %), two
#    launches (`.wr.sr.fl`) and one (`bwd.f64.*.gs.fl.rw`, as the routed heads program is).
# 2. f64-8192: plain H 8192, T 4096 and 65536 (the floor target's binding row, BF16 T 4096 0.956x).
# 3. f64-1536: plain H 1536, T 65536 and 1M (the peer target's binding row, BF16 T 1M 0.840x).
# 4. f64-512: plain H 512, T 65536 and 1M (the copy target's next rows, 77.7-78.5 %).
# Timings from a card that is not an H200 are not the route table's: this script then stops
# (session36.sh probes the same programs on another card with variant_probe.py).
# Usage: bash scripts/device/campaign_r36a.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r36a; . scripts/device/campaign_begin.sh ${1:-560}
F=bwd.f64_pair
Q="--ops bwd --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120"
run f64-hc --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536,262144 $Q --wave-units 2 \
  --programs routed,$F.p16x.w1.pf.wr.sr.fl,$F.p20x.w1.pf.wr.sr.fl,$F.p16x.r2.w1.pf.wr.sr.fl,$F.p12x.r2.w1.pf.wr.sr.fl,bwd.f64.p16x.w1.pf.gs.fl.rw,bwd.f64.p20x.w1.pf.gs.fl.rw,bwd.f64.p12x.r2.w1.pf.gs.fl.rw
run f64-8192 --H 8192 --forms plain --w-dtypes bf16,fp32 --T 4096,65536 $Q --wave-units 2 \
  --programs routed,$F.p1x.w16.pf.wr,$F.p1x.w16.pf.wr.wc,$F.p1x.w16.s4.wr.tmc,$F.p1x.w16.s4.wr.tmc.wc,$F.p1x.w8.s6.wr.tmc,$F.p1x.w8.s6.wr.tmc.wc
run f64-1536 --H 1536 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 $Q --wave-units 2 \
  --programs routed,$F.p1x.r4.w8.pf.wr,$F.p1x.r4.w8.pf.wr.wc,$F.p1x.r4.w8.s4.wr.tmc,$F.p1x.r4.w8.s4.wr.tmc.wc,$F.p2x.r2.w8.pf.wr,$F.p2x.r2.w8.pf.wr.wc
run f64-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 $Q --wave-units 2 \
  --programs routed,$F.p4x.r4.w2.pf.wr,$F.p4x.r4.w2.pf.wr.wc,$F.p8x.r2.w2.pf.wr,$F.p8x.r2.w2.pf.wr.wc,$F.p8x.w2.pf.wr,$F.p8x.w2.pf.wr.wc
campaign_end
