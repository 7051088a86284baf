#!/usr/bin/env bash
# H200 round 32a (session 32): the multi-row `.tma` backwards, timing only.
# 1. tma-1536: plain H 1536, T 4096-1M, the backward peer target's binding row (BF16 T 1M: routed
#    `p1x.r4.w8.fw.pf.wr.xs.wc` 2,887 us against QuACK's 2,425, 0.840x). On an H100 80GB HBM3
#    (session 32, scripts/device/variant_probe.py, one process) `p1x.r4.w8.s4.wr.tma` took 3,141 us
#    there against the routed 3,517 (1.12x; 1.11-1.15x from T 16384 to 1M, both weights); session 32
#    qualified the four programs below at these keys on that card (120 inputs per family, worst
#    err/tol 0.0006).
# 2. tma-narrow: contiguous heads H 256 and plain H 512, the copy target's rows (69.6 % and 77.7 %
#    of copy), with the one- and two-warp `.xs.sr.tma` shapes, qualified on an H100 in session 32
#    (campaign_h32c.sh). On that card they tied the two-row pointer `.fl` program at contiguous heads
#    (151.1 against 149.0 us at T 65536) and lost at H 512: timed here last, for the record.
# Timings from a card that is not an H200 are not the route table's: this script then stops.
# Usage: bash scripts/device/campaign_r32a.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r32a; . scripts/device/campaign_begin.sh ${1:-180}
B=bwd.twosum_pair
T1536=$B.p1x.r4.w8.s4.wr.tma,$B.p1x.r4.w8.s4.wr.tma.wc,$B.p2x.r2.w8.s4.wr.tma,$B.p2x.r2.w8.s4.wr.tma.wc
run tma-1536 --H 1536 --forms plain --w-dtypes bf16,fp32 --T 4096,16384,65536,262144,1048576 --ops bwd \
  --programs routed,$T1536 --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 5
NARROW=$B.p16x.r2.w1.s4.wr.xs.sr.tma,$B.p12x.r2.w1.s6.wr.xs.sr.tma,$B.p5x.r4.w2.s4.wr.xs.sr.tma,$B.p4x.r4.w2.s6.wr.xs.sr.tma
run tma-narrow-hc --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536,262144 --ops bwd --programs routed,$NARROW \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2
run tma-narrow-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,262144,1048576 --ops bwd --programs routed,$NARROW \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 3
campaign_end
