#!/usr/bin/env bash
# H200 campaign round 11a (written in session 10; not run yet). No peers: carries nothing.
#  1. wc-1m: qualify the `.wc` backwards at T 1M, the fastest in-budget-looking program per H in round 10c
#     (30 inputs per family there, worst err/tol 0.0006; 1.04-1.15x faster than the routed program):
#     H 512 p8x.r2.w2, H 1536/2048 p2x.r2.w8, H 8192 twosum.p2x.w8. One run of 120 per family, because
#     runs re-draw the same inputs and their counts do not add up (measurements_db.aggregates).
#     H 8192 first: it is the slowest unit (round 10c: 89.5 s for 30 per family with 5 programs).
#  2. wc-1m-step: their 2xfwd+bwd steps and times at T 1M (timing only), beside the programs routed there now.
PREFIX=r11a; . scripts/device/campaign_begin.sh
END=$(( END0 - ${SSECS:-90} ))
run wc-1m-8192 --H 8192 --forms plain --w-dtypes bf16 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf.wc \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 1
run wc-1m --H 1536,2048,512 --forms plain --w-dtypes bf16 --T 1048576 \
  --programs bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.wc,bwd.twosum_pair.p8x.r2.w2.fw.pf.wr.wc \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 1
END=$END0
run wc-1m-step --H 512,1536,2048,8192 --forms plain --w-dtypes bf16 --T 1048576 --programs bwd.twosum_pair.p4x.r4.w2.fw.pf.wr,bwd.twosum_pair.p1x.r4.w8.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.twosum_pair.p8x.r2.w2.fw.pf.wr.wc,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.wc,bwd.twosum.p2x.w8.fw.pf.wc \
  --peers none --ops bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
campaign_end
