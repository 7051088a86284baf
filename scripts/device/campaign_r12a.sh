#!/usr/bin/env bash
# H200 campaign round 12a (session 12). Carries .whlA (Liger; QuACK's DSL is not joined this round,
# so QuACK is not named). The `.wt` forwards (weight read in the rows' layout: no shared-memory
# conversion of an FP32 weight) beside the programs the shipped table routes at each unit, the two
# `.wx` programs that won most small-T rows in round 11, Liger and torch.compile, side by side.
#   1. wt-fp32 / wt-bf16: plain rows, every H of the grid, T 1-4096 (the T <= 256 target's rows).
#   2. wt-heads: both head forms (H 256), T 1-4096.
#   3. wt-big: T 65536 and 1M where the FP32 weight crossed shared memory once per tile (prefetch
#      programs) or per program (many-row tiles): plain H 512-8192 FP32, contiguous heads.
PREFIX=r12a; . scripts/device/campaign_begin.sh
WT=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if n.endswith('.wt')))")
P="routed,$WT,fwd.row.r1.w8.wx,fwd.persist.p2x.r1.w16.pf.wx"
PEERS="--peers peer.liger,peer.torch_compile.default"
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run wt-fp32 --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32 --T 1,16,256,4096 --programs $P $PEERS $S --wave-units 14
run wt-bf16 --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes bf16 --T 1,16,256,4096 --programs $P $PEERS $S --wave-units 14
run wt-heads --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,256,4096 --programs $P $PEERS $S --wave-units 8
run wt-big --H 512,1536,5120,6144,8192 --forms plain --w-dtypes fp32 --T 65536,1048576 --programs $P $PEERS $S --wave-units 5
campaign_end
