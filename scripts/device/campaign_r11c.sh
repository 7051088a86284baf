#!/usr/bin/env bash
# H200 campaign round 11c (session 11): screen the `.xs` backwards (products made exact by a split
# rstd, programs/backward.py rmsnorm_bwd_rows_split_rstd_kernel) and the unpadded two-row tile at
# H 1536 (`p2x.r2.w8.fw.pf.wr.sp`) beside the programs they would replace, FP32 weight, T 65536 and
# 1M, timing only (accuracy comes in round 11d for the ones that win). No peers: carries nothing.
PREFIX=r11c; . scripts/device/campaign_begin.sh
B=bwd.twosum_pair
S="--forms plain --w-dtypes fp32 --T 65536,1048576 --peers none --ops bwd --sessions 1 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2"
run s512 --H 512 --programs $B.p8x.r2.w2.fw.pf.wr,$B.p8x.r2.w2.fw.pf.wr.xs,$B.p4x.r4.w2.fw.pf.wr,$B.p4x.r4.w2.fw.pf.wr.xs $S
run s1536 --H 1536,2048 --programs $B.p2x.r2.w8.fw.pf.wr,$B.p2x.r2.w8.fw.pf.wr.xs,$B.p2x.r2.w8.fw.pf.wr.sp,$B.p2x.r2.w8.fw.pf.wr.sp.xs,$B.p1x.r4.w8.fw.pf.wr,$B.p1x.r4.w8.fw.pf.wr.xs $S
run s4096 --H 4096,8192 --programs $B.p2x.w4.fw.pf.wr,$B.p2x.w4.fw.pf.wr.xs,$B.p1x.w16.fw.pf.wr,$B.p1x.w16.fw.pf.wr.xs $S
run s6144 --H 5120,6144 --programs $B.p2x.w8.fw.pf.wr.sp,$B.p2x.w8.fw.pf.wr.sp.xs,$B.p2x.r2.w8.fw.pf.wr.sp,$B.p2x.r2.w8.fw.pf.wr.sp.xs $S
campaign_end
