#!/usr/bin/env bash
# H200 round 34a (session 34): timing only of the one-box TMA backwards (`.tmc`) at plain H 4096, the
# copy and peer targets' H 4096 rows (BF16 T 65536 at 90.5 % of copy and 0.978x QuACK with the
# routed `p2x.w4.fw.pf.wr.xs`). On an H100 (bench/results/h100-2026-12-07e, variant_probe.py) they
# were 1.02-1.07x the routed program from T 16384 to 1M, with either weight, and campaign_h34a.sh
# qualified all four at T 65536, 262144 and 1M (120 inputs per family, worst err/tol 0.0006).
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r34a; . scripts/device/campaign_begin.sh ${1:-120}
T=bwd.twosum_pair
run tmc-4096 --H 4096 --forms plain --w-dtypes bf16,fp32 --T 65536,262144,1048576 --ops bwd \
  --programs routed,$T.p1x.r2.w16.s3.wr.tmc,$T.p1x.r2.w16.s3.wr.tmc.wc,$T.p1x.w8.s6.wr.tmc,$T.p1x.w8.s6.wr.tmc.wc \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 6
campaign_end
