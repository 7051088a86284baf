#!/usr/bin/env bash
# H200 campaign round 9c (written in session 8): the forward at T <= 256, the weakest rows of the
# bench (peer/ours 0.68-0.97, Liger fastest). At H 4096-8192 with an FP32 weight the rows come from
# round 3, when `fwd.row.r1.w16` (one row, 16 warps, as Liger launches it: 1.95 us at H 5120 with a
# BF16 weight against our routed 2.62 us with FP32) and the prefetching/split programs did not exist.
# Every forward program, both weights, beside Liger, QuACK (heuristic, when r9b installed it on this
# warm machine) and torch.compile default.
PREFIX=r9c; . scripts/device/campaign_begin.sh
F="--forms plain --w-dtypes fp32,bf16 --T 1,16,256 --programs fwd --peers peer.liger,peer.quack.heuristic,peer.torch_compile.default \
  --ops fwd --sessions 2 --seconds-per-unit 0.5 --inputs-per-family 0 --wave-units 6"
END0=$END; END=$(( END0 - ${RSECS:-150} ))
run fwd-small-wide --H 4096,5120,6144,8192 $F  # the weakest rows first (the plan orders units by H)
END=$END0
run fwd-small-narrow --H 512,1536,2048 $F
campaign_end
