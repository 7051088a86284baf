#!/usr/bin/env bash
# Round 24a (session 28): accuracy only (`measure --accuracy-only`), on any card of sm_90a with 132 SMs
# (an H100 80GB HBM3 or the H200: `measurements_db.aggregates.evidence_runs` takes accuracy from cards
# of the timed card's SM count; scripts/accuracy_across_cards.py measured H100 against H200 aggregates
# equal to 9e-10). The points are the ones where the stored H200 timings have a faster program than
# the routed one and only its accuracy is missing (`solve --next-out`, kind "accuracy"):
# 1. q-hs-262k: strided heads, BF16 weight, T 262144, the bwd-copy target's binding row: the routed
#    `twosum_pair.p16x.w1.fw.pf.wr` takes 3,447 us, the two-row `.xs.wc.sr` 2,619 (1.32x), with 4
#    inputs per family where 120 qualify.
# 2. q-hs-1m: the same key at T 1M (routed 13,673 us, `.xs.wc.sr` 10,556; 8 inputs per family).
# 3. q-8k: plain H 8192 FP32 T 65536, `twosum_pair.p2x.w4.fw.pf.wr.xs` (1.03x, no accuracy evidence).
# 4. q-hc-262k: contiguous heads, BF16, T 262144: the one-row `.sr` programs (28 inputs per family).
# Usage: bash scripts/device/campaign_r24a.sh [SECONDS]
PREFIX=r24a; . scripts/device/campaign_begin.sh ${1:-540}
A="--sessions 1 --accuracy-only --inputs-per-family 120 --peers none --ops bwd --wave-units 1"
P2=bwd.twosum_pair.p16x.r2.w1.fw.pf.wr
HS=$P2.xs.wc.sr,$P2.xs.wc,$P2.xs.sr,$P2.xs,$P2.wc,$P2,bwd.twosum_pair.p12x.r2.w1.fw.pf.wr.xs.wc.sr,bwd.twosum_pair.p12x.r2.w1.fw.pf.wr.xs.sr,bwd.twosum_pair.p16x.w1.fw.pf.wr.xs.sr,bwd.twosum_pair.p16x.w1.fw.pf.wr.sr
run q-hs-262k --H 256 --forms heads_strided --w-dtypes bf16 --T 262144 --programs $HS $A
run q-hs-1m --H 256 --forms heads_strided --w-dtypes bf16 --T 1048576 --programs $P2.xs.wc.sr,$P2.xs.sr,bwd.twosum_pair.p4x.r4.w2.fw.pf.wr $A
run q-8k --H 8192 --forms plain --w-dtypes fp32 --T 65536 --programs bwd.twosum_pair.p2x.w4.fw.pf.wr.xs $A
run q-hc-262k --H 256 --forms heads_contiguous --w-dtypes bf16 --T 262144 --programs bwd.twosum_pair.p16x.w1.fw.pf.wr.sr,bwd.twosum_pair.p16x.w1.fw.pf.wr.xs.sr $A
campaign_end
