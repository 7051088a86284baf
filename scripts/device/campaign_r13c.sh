#!/usr/bin/env bash
# H200 round 13c (session 13). Carries .whlG (Liger). After the table re-solved on rounds 12-13b:
#   1. lp-wide: round 13b's lp-big at the H it did not reach (6144, 8192), both weights, T 65536 and 1M.
#   2. steps: the 2xfwd+bwd steps of the new table where its forwards changed (H 4096-8192), T 4096-1M.
PREFIX=r13c; . scripts/device/campaign_begin.sh ${1:-540}
LP=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('fwd') if r.get(n).launch.chunk))")
S="--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0"
run lp-wide --H 6144,8192 --forms plain --w-dtypes fp32,bf16 --T 65536,1048576 --programs routed,$LP \
  --peers peer.liger,peer.torch_compile.default --ops fwd $S --wave-units 4
run steps --H 4096,5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536,1048576 --programs routed \
  --peers none --ops 2xfwd+bwd $S --wave-units 12
campaign_end
