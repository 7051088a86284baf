#!/usr/bin/env bash
# H200 campaign round 11d (session 11): qualify the `.xs` backwards that won round 11c's timing screen
# (FP32 weight, T 65536 and 1M): H 1536 p1x.r4.w8 (2857 against the routed 3004 us at 1M), H 512
# p4x.r4.w2 (830 against 882), H 5120 p2x.w8.sp (10245 against 10916). Both weights (the BF16 one
# through the `.wc` twin), T 4096-1M, 120 inputs per family, beside the programs routed there now.
# No peers: carries nothing.
PREFIX=r11d; . scripts/device/campaign_begin.sh
B=bwd.twosum_pair
Q="--forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --peers none --ops bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 2"
run q1536 --H 1536 --programs $B.p1x.r4.w8.fw.pf.wr.xs,$B.p1x.r4.w8.fw.pf.wr.xs.wc,$B.p2x.r2.w8.fw.pf.wr,$B.p2x.r2.w8.fw.pf.wr.wc $Q
run q512 --H 512 --programs $B.p4x.r4.w2.fw.pf.wr.xs,$B.p4x.r4.w2.fw.pf.wr.xs.wc,$B.p8x.r2.w2.fw.pf.wr,$B.p8x.r2.w2.fw.pf.wr.wc $Q
run q5120 --H 5120 --programs $B.p2x.w8.fw.pf.wr.sp.xs,$B.p2x.w8.fw.pf.wr.sp.xs.wc $Q
campaign_end
