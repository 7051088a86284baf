#!/usr/bin/env bash
# H200 round 14c (session 14): the two runs round 14b had no time left for. Carries .whlG (Liger).
# Residual rows at H 6144 (T 1-1M) with every `.hs` program, and plain rows at H 512-2048 (T 65536 and
# 1M) with the multi-row and 4-warp `.hs` programs, beside the routed programs and the peers; Triton's
# cache filled first for both (warm_compile.py).
PREFIX=r14c; . scripts/device/campaign_begin.sh ${1:-540}
HS=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.static_h))")
WIDE=fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w4.c1024.hs,fwd.row.r2.w4.c1024.hs,fwd.row.r1.w4.c1024.hs,fwd.row.r4.w4.c2048.hs,fwd.row.r1.w4.c2048.hs
python scripts/device/warm_compile.py --programs $HS --H 6144 --forms residual > $W/warm-res.log 2>&1; tail -1 $W/warm-res.log
python scripts/device/warm_compile.py --programs $WIDE --H 512,1536,2048 --forms plain > $W/warm-big.log 2>&1; tail -1 $W/warm-big.log
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers peer.liger,peer.torch_compile.default"
run hs2-res --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,16,256,4096,65536,1048576 --programs routed,$HS $S --wave-units 6
run hs2-big --H 512,1536,2048 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs routed,$WIDE $S --wave-units 6
campaign_end
