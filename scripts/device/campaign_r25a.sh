#!/usr/bin/env bash
# H200 round 25a (session 29): the two units of the queue that can each turn a target row.
# 1. fl-fwd-1m (from campaign_r22a.sh): the `.fl` forwards at contiguous heads T 1M, the forward peer
#    target's binding row (FP32: the routed `r4.w2.c512.hs` 1,048 us against torch.compile's 1,024;
#    at T 262144 `.fl` took that row from 265 to 251 us; never timed at T 1M).
# 2. pwr-4k-8192 (from campaign_r23a.sh): H 8192 at T 4096, the backward floor's binding row (BF16:
#    routed 73.34 us against QuACK's 70.14, 0.956x; on an H100 `pair.p1x.w16.pf.op` took 76.05 us
#    against the routed 90.83).
# 2b. fwd-c1, fwd-c1-16: the one-chunk forwards (`r1.w16.c4096`, `.c8192`, whole row in registers) at
#    FP32 T 64 and 256 (H 4096, 6144, 8192) and T 16 (H 4096, 5120), where the forward T <= 256 rows are short (0.925-0.984x). They were timed there
#    with a BF16 weight only: at H 4096 BF16 T 64 `c4096.hs` took 1.79 us against 2.02-2.14 for every
#    other forward and torch.compile's 2.02 (same run); the FP32 row's best is 2.05 against 1.95.
#    Peers in the same run (Liger from .whlG), so the comparison is side by side.
# 3. hc-r2: the two-row `.fl` programs at contiguous heads H 256, T 65536 and 262144, queued since
#    round 19b and never run on the H200. At strided heads the two-row build took T 262144 from 68.3 %
#    to 89.9 % of copy; the contiguous rows sit at 69.6-79.5 % with one row per warp (the copy target's
#    next rows after strided T 1M).
# Timings from a card that is not an H200 are not the route table's: this script then stops.
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
case "$GPU" in *H200*) ;; *) echo "not an H200: nothing measured"; exit 0 ;; esac
PREFIX=r25a; . scripts/device/campaign_begin.sh ${1:-240}
. scripts/device/pair_programs.sh
# Timing only: session 30 qualified these programs here on an H100 with 132 SMs (120 inputs per
# family, bench/results/h100-2026-12-07), which the solver counts for sm_90a (aggregates.evidence_runs).
run pwr-4k-8192 --H 8192 --forms plain --w-dtypes fp32,bf16 --T 4096 --ops bwd --programs routed,$PW --peers none \
  --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 4
C1=fwd.row.r1.w16.c4096.hs,fwd.row.r1.w16.c8192.hs,fwd.row.r1.w16.c4096,fwd.row.r1.w16.c8192
F="--forms plain --w-dtypes fp32 --ops fwd --programs routed,$C1,fwd.row.r1.w2.hs.fs,fwd.row.r1.w1.hs.fs
  --peers peer.torch_compile.default,peer.liger --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run fwd-c1 --H 4096,6144,8192 --T 64,256 $F --wave-units 6
run fwd-c1-16 --H 4096,5120 --T 16 $F --wave-units 2
run fl-fwd-1m --forms heads_contiguous --w-dtypes fp32,bf16 --T 1048576 --ops fwd \
  --programs routed,fwd.row.r4.w2.c512.hs.fl,fwd.row.r8.w4.c256.hs.fl,fwd.row.r8.w4.c512.hs.fl --peers peer.torch_compile.default \
  --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2
B=bwd.twosum_pair
run hc-r2 --forms heads_contiguous --w-dtypes bf16,fp32 --T 65536,262144 --ops bwd \
  --programs routed,$B.p16x.r2.w1.fw.pf.wr.xs.sr.fl,$B.p16x.r2.w1.fw.pf.wr.xs.wc.sr.fl,$B.p12x.r2.w1.fw.pf.wr.xs.sr.fl \
  --peers none --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 2  # qualified likewise
campaign_end
