#!/usr/bin/env bash
# H200 campaign round 10a (written in session 9; not run yet). Carries .whlA (Liger).
#  1. heads-fp32: contiguous heads with an FP32 weight, every forward and every head backward program
#     with Liger (its backward now called with the 2-D rows its forward returns), T 1-65536. Round 9
#     measured only the routed programs there and lost T 4096's accuracy to the harness's Liger call,
#     so that key's backward is loud for T 257-65535 and its forward is the fallback everywhere.
#  2. liger-heads: Liger's head-form backward and step again (retracted: measurements_db/retracted/),
#     contiguous heads, BF16 weight, beside the routed programs, with accuracy.
PREFIX=r10a; . scripts/device/campaign_begin.sh
END=$(( END0 - ${LSECS:-200} ))
run heads-fp32 --forms heads_contiguous --w-dtypes fp32 --T 1,16,256,4096,65536 --programs fwd,bwd.twosum_pair,bwd.column_task \
  --peers peer.liger,peer.eager --ops fwd,bwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120 --wave-units 1
END=$END0
run liger-heads --forms heads_contiguous --w-dtypes bf16 --T 1,256,4096,65536,262144,1048576 --programs routed \
  --peers peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
campaign_end
