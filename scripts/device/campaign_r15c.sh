#!/usr/bin/env bash
# H200 round 15c (session 15), written during the session and run warm right after 15b (the copy the
# device call wrote into $OUT): both head views with the one-row and narrow `.hs` forwards beside the
# routed programs and the peers, T 262144/1M first (round 15a's r1-heads stopped before them), then
# T 1/16/256.
PREFIX=r15c; . scripts/device/campaign_begin.sh ${1:-400}
ROW1=fwd.row.r1.w1.hs,fwd.row.r1.w2.hs,fwd.row.r1.w4.hs,fwd.row.r1.w8.hs,fwd.row.r1.w16.hs
NARROW=fwd.row.r1.w1.c256.hs,fwd.row.r1.w2.c256.hs,fwd.row.r8.w4.c256.hs,fwd.row.r1.w2.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs
S="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
P="--peers peer.liger,peer.torch_compile.default --ops fwd"
run h-big --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 262144,1048576 --programs routed,$ROW1,$NARROW $P $S --wave-units 8
run h-small --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,256 --programs routed,$ROW1,$NARROW $P $S --wave-units 12
campaign_end
