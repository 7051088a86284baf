#!/usr/bin/env bash
# H200 campaign round 10c (written in session 9; not run yet): the `.wc` backward programs (a BF16
# weight cast to FP32 first, so that the FP32-weight build runs; registry.LaunchPolicy.weight_cast).
# The store shows the same program 1.25-1.44x slower with a BF16 weight in places (H 1536/2048
# p2x.r2.w8, H 512 p8x.r2.w2, H 5120-8192 twosum.p2x.w8) and the best BF16-weight backward 11-16 %
# slower than the best FP32-weight one at H 1536, 2048 and 8192 (T 65536 and 1M). Timing beside the
# base programs (BF16 build) and QuACK; accuracy qualified up to T 65536 (120 per family), 30 per family
# above (a second run qualifies T 1M where they win). Carries .whlB (QuACK) after r10b.
PREFIX=r10c; . scripts/device/campaign_begin.sh
WC=$(python -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('bwd') if n.endswith('.wc')))")
run wc-plain --H 512,1536,2048,8192 --forms plain --w-dtypes bf16 --T 4096,65536,1048576 --programs $WC,${WC//.wc/} \
  --peers peer.quack.heuristic --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 \
  --accuracy-max-T 65536 --large-T-inputs 30 --wave-units 1
campaign_end
