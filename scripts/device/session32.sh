#!/usr/bin/env bash
# The next session's device calls (from session 31, widened in session 32). On an H200 (the route table's card):
# campaign_r25a.sh (timing only where 132-SM H100 runs qualified its programs: the backward floor's
# H 8192 T 4096 unit, the two-row `.fl` backwards at contiguous heads, the copy target's binding row;
# the one-chunk forwards at the short FP32 forward rows, the `.fl` forwards at T 1M), then
# small_fwd_probe.py at the forward T <= 256 rows where 240 s are left, then the rest of
# campaign_r23a.sh, timing only since session 31's H100 run qualified its remaining units
# (campaign_h31a.sh, bench/results/h100-2026-12-07b); from session 32, campaign_r32a.sh (the
# multi-row `.tma` backwards) after r25a. Another card has nothing queued.
# Usage: bash scripts/device/session32.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
T0=$(date +%s); B=${1:-540}
left() { echo $(( B - ($(date +%s) - T0) )); }
case "$GPU" in
  *H200*)
    bash scripts/device/campaign_r25a.sh $([ $B -lt 400 ] && echo $B || echo $(( B * 3 / 5 )))
    [ $(left) -gt 60 ] && bash scripts/device/campaign_r32a.sh $(( $(left) < 200 ? $(left) : 200 ))
    if [ $(left) -gt 240 ]; then
      P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
      PYTHONPATH=$PWD timeout 150 python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
        --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 \
        > $OUT/small-fwd-probe.log 2>&1
      grep -v '^{' $OUT/small-fwd-probe.log | tail -60
    fi
    SKIP=pwr-4k-8192 bash scripts/device/campaign_r23a.sh $(left) ;;
  *)
    # Session 32's H100 ran what another card can tell: the variant probes and the accuracy of the
    # `.tma` programs (bench/results/h100-2026-12-07c). Nothing else is queued for it.
    echo "not an H200: nothing queued for this card; nothing measured" ;;
esac
