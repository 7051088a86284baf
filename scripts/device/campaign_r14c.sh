#!/usr/bin/env bash
# H200 round 14c (session 14): the two runs round 14b had no time left for. Carries .whlG (Liger).
# Round 14a: the `.hs` forwards (H compiled in) matched torch.compile at H 8192 under ncu (493.0 against
# 492.2 us, 89.5 % DRAM) and beat every runtime-H forward at H 4096-8192, T >= 4096. This round times the
# 12 `.hs`-only configurations (fewer warps, several rows per tile) beside the routed programs and the
# peers: plain rows at T 1-256 (every H), the head views and residual rows at H 6144, and plain rows
# at H 512-2048 for T 65536 and 1M. Triton's cache is filled first in 14 processes (warm_compile.py).
PREFIX=r14c; . scripts/device/campaign_begin.sh ${1:-540}
HS=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.static_h))")
NARROW=fwd.row.r1.w1.c256.hs,fwd.row.r1.w2.c256.hs,fwd.row.r8.w4.c256.hs,fwd.row.r1.w2.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs
WIDE=fwd.row.r4.w2.c512.hs,fwd.row.r8.w4.c512.hs,fwd.row.r1.w4.c512.hs,fwd.row.r4.w4.c1024.hs,fwd.row.r2.w4.c1024.hs,fwd.row.r1.w4.c1024.hs,fwd.row.r4.w4.c2048.hs,fwd.row.r1.w4.c2048.hs
python scripts/device/warm_compile.py --programs $HS --H 6144 --forms residual > $W/warm-res.log 2>&1; tail -1 $W/warm-res.log
python scripts/device/warm_compile.py --programs $WIDE --H 512,1536,2048 --forms plain > $W/warm-big.log 2>&1; tail -1 $W/warm-big.log
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --peers peer.liger,peer.torch_compile.default"
run hs2-res --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,16,256,4096,65536,1048576 --programs routed,$HS $S --wave-units 6
run hs2-big --H 512,1536,2048 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs routed,$WIDE $S --wave-units 6
campaign_end
