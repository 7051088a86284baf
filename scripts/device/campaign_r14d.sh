#!/usr/bin/env bash
# H200 round 14d (session 14): the head views at T 4096 and 65536, which round 14b's hs2-heads run
# did not reach (the device call was warm from round 14c; no warm_compile: those builds are cached).
PREFIX=r14d; . scripts/device/campaign_begin.sh ${1:-200}
NARROW=fwd.row.r1.w1.c256.hs,fwd.row.r1.w2.c256.hs,fwd.row.r8.w4.c256.hs,fwd.row.r1.w2.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers peer.liger,peer.torch_compile.default"
run hs3-heads --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 4096,65536 --programs routed,$NARROW $S --wave-units 8
campaign_end
