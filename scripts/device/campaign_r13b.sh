#!/usr/bin/env bash
# H200 round 13b (session 13). Carries .whlG (Liger). The looped forwards (`.c{chunk}`, torch.compile's
# two-pass structure) beside what ships and the peers, side by side, forward only:
#   1. lp-small: plain rows, every H, both weights, T 1-4096 (the T <= 256 target's rows).
#   2. lp-big: plain rows, every H, both weights, T 65536 and 1M (the copy-bandwidth target's rows).
#   3. lp-forms: both head forms (T 1-65536) and residual rows at H 6144 (T 1-1M).
PREFIX=r13b; . scripts/device/campaign_begin.sh ${1:-560}
LP=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.chunk))")
P="routed,$LP"
PEERS="--peers peer.liger,peer.torch_compile.default"
S="--ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run lp-small --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 1,16,256,4096 --programs $P $PEERS $S --wave-units 14
run lp-big --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs $P $PEERS $S --wave-units 7
run lp-heads --forms heads_contiguous,heads_strided --w-dtypes fp32,bf16 --T 1,16,256,4096,65536 --programs $P $PEERS $S --wave-units 10
run lp-res --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,16,256,4096,65536,1048576 --programs $P $PEERS $S --wave-units 6
campaign_end
