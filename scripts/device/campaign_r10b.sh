#!/usr/bin/env bash
# H200 campaign round 10b (written in session 9; not run yet): the `.wx` forwards (weight read beside
# the rows, programs/forward.py) against their base programs and the peers where the forward is
# latency-bound, T <= 4096, both weights, every H, then the head forms. Carries .whlB after r10a's
# .whlA (QuACK joins from its two parts).
PREFIX=r10b; . scripts/device/campaign_begin.sh
WX=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if n.endswith('.wx')))")
P=$WX,${WX//.wx/}  # each `.wx` program and its base
F="--w-dtypes fp32,bf16 --T 1,16,256,4096 --programs $P --ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 6"
END=$(( END0 - ${HSECS:-120} ))
run wx-plain --H 512,1536,2048,4096,5120,6144,8192 --forms plain --peers peer.liger,peer.quack.heuristic,peer.torch_compile.default $F
END=$END0
run wx-heads --forms heads_contiguous,heads_strided --peers peer.liger,peer.torch_compile.default $F
campaign_end
