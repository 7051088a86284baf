#!/usr/bin/env bash
# H200 campaign round 12b (session 12). No peers: carries nothing.
#  1. steps: the 2xfwd+bwd steps (and backwards) of what ships at the keys whose backward routes round 11
#     changed (r11d ran --ops bwd only, so the bench's step rows there were empty), T 4096-1M.
#  2. q4096 / q6144: qualify the `.xs` twins that round 11c timed 1.5-2 % faster than the routed
#     backward (H 4096 p2x.w4, H 6144 p2x.w8.sp), both weights, 120 inputs per family, T 4096-1M.
#     Skipped by the time limit if the steps take the call.
PREFIX=r12b; . scripts/device/campaign_begin.sh
run steps --H 512,1536,2048,5120,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --programs routed \
  --peers none --ops bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 15
B=bwd.twosum_pair
Q="--forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --peers none --ops bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 2"
run q4096 --H 4096 --programs $B.p2x.w4.fw.pf.wr.xs,$B.p2x.w4.fw.pf.wr.xs.wc $Q
run q6144 --H 6144 --programs $B.p2x.w8.fw.pf.wr.sp.xs,$B.p2x.w8.fw.pf.wr.sp.xs.wc $Q
campaign_end
