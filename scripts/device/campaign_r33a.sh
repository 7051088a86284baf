#!/usr/bin/env bash
# H200 round 33a (session 33): timing only of the two-row reload backward `p1x.r2.w16.fw.wr.xs.rl` at
# plain H 8192 (the copy target's H 8192 rows: BF16 T 65536 at 84.0 % of copy with the routed
# `p1x.w16.fw.pf.wr`). On an H100 it took that key from 1,217.0 to 1,134.7 us (1.07x;
# bench/results/h100-2026-12-07d), and campaign_h33a.sh qualified it there at T 65536 and 262144.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r33a; . scripts/device/campaign_begin.sh ${1:-120}
run rl-8192 --H 8192 --forms plain --w-dtypes bf16,fp32 --T 65536,262144 --ops bwd \
  --programs routed,bwd.twosum_pair.p1x.r2.w16.fw.wr.xs.rl --peers none --sessions 2 --seconds-per-unit 0.5 \
  --inputs-per-family 0 --wave-units 4
campaign_end
