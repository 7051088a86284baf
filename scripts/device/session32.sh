#!/usr/bin/env bash
# The next session's device calls (from session 31). On an H200 (the route table's card):
# campaign_r25a.sh (timing only where 132-SM H100 runs qualified its programs: the backward floor's
# H 8192 T 4096 unit, the two-row `.fl` backwards at contiguous heads, the copy target's binding row;
# the one-chunk forwards at the short FP32 forward rows, the `.fl` forwards at T 1M), then
# small_fwd_probe.py at the forward T <= 256 rows where 240 s are left, then the rest of
# campaign_r23a.sh, timing only since session 31's H100 run qualified its remaining units
# (campaign_h31a.sh, bench/results/h100-2026-12-07b). Another card runs the session-32 variant probe.
# Usage: bash scripts/device/session32.sh [SECONDS]
PROBE_PROGRAMS='bwd.twosum_pair.p2x.r2.w8.s4.wr.xs.tma*,bwd.twosum_pair.p1x.r4.w8.s4.wr.xs.tma*,bwd.twosum_pair.p2x.r2.w8.s4.wr.tma*,bwd.twosum_pair.p2x.r2.w8.s6.wr.tma*,bwd.twosum_pair.p1x.r4.w8.s4.wr.tma*,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.sp.xs*,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr.xs.wc,bwd.twosum_pair.p2x.w4.s6.wr.tma,bwd.twosum_pair.p1x.r4.w8.fw.pf.wr.xs.wc'
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
T0=$(date +%s); B=${1:-540}
left() { echo $(( B - ($(date +%s) - T0) )); }
case "$GPU" in
  *H200*)
    bash scripts/device/campaign_r25a.sh $([ $B -lt 400 ] && echo $B || echo $(( B * 3 / 5 )))
    if [ $(left) -gt 240 ]; then
      P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
      PYTHONPATH=$PWD timeout 150 python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
        --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 \
        > $OUT/small-fwd-probe.log 2>&1
      grep -v '^{' $OUT/small-fwd-probe.log | tail -60
    fi
    SKIP=pwr-4k-8192 bash scripts/device/campaign_r23a.sh $(left) ;;
  *)
    # Session 32: the register-capped `.mr128` H 1536 split tile and the multi-row `.tma` programs,
    # side by side with the routed program and their pointer-load bases (an indicative screen: any
    # Hopper tells whether they are worth an H200 campaign).
    PYTHONPATH=$PWD timeout $(( B - 30 )) python3 scripts/device/variant_probe.py --seconds $(( B - 200 )) \
      --keys plain:1536:bf16:65536,plain:1536:bf16:1048576,plain:2048:bf16:1048576,plain:1536:fp32:1048576 \
      --programs "$PROBE_PROGRAMS" > $OUT/variant-probe.log 2>&1
    tail -80 $OUT/variant-probe.log ;;
esac
