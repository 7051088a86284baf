#!/usr/bin/env bash
# H200 round 15b (session 15), on the machine round 15a left warm (Triton's cache holds its builds):
#  1. r1-big: the one-row `.hs` forwards at T 65536/1M, H 1536-8192 (the row read once from registers,
#     against the looped `.hs` programs' re-read), beside the routed programs and the peers.
#  2. narrow-512: plain H 512 at T 16/256/4096 with the multi-row `.hs` programs (round 14's worst plain
#     forward rows against torch.compile: H 512 T 4096, 0.874 BF16 and 0.868 FP32; no `.hs` timed there).
#  3. steps: the routed 2xfwd+bwd over plain rows, T 4096/65536/1M, with round 14's forward routes.
PREFIX=r15b; . scripts/device/campaign_begin.sh ${1:-540}
ROW1=fwd.row.r1.w1.hs,fwd.row.r1.w2.hs,fwd.row.r1.w4.hs,fwd.row.r1.w8.hs,fwd.row.r1.w16.hs
NARROW=fwd.row.r1.w1.c256.hs,fwd.row.r1.w2.c256.hs,fwd.row.r8.w4.c256.hs,fwd.row.r1.w2.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs
python scripts/device/warm_compile.py --programs $ROW1,$NARROW --H 512,1536,2048,4096,5120,6144,8192 --forms plain > $W/warm-plain.log 2>&1; tail -1 $W/warm-plain.log
S="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
P="--peers peer.liger,peer.torch_compile.default --ops fwd"
run r1-big --H 1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs routed,$ROW1 $P $S --wave-units 6
run narrow-512 --H 512 --forms plain --w-dtypes fp32,bf16 --T 16,256,4096 --programs routed,$ROW1,$NARROW $P $S --wave-units 6
run steps --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --programs routed \
  --peers none --ops 2xfwd+bwd $S --wave-units 14
campaign_end
