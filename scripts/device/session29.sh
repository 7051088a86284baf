#!/usr/bin/env bash
# Session 29's device calls. On an H200 (the route table's card): campaign_r25a.sh (H 8192 T 4096 for
# the backward floor, the `.fl` forwards at T 1M for the forward peer target, the two-row `.fl`
# backwards at contiguous heads), then campaign_r24b.sh (below) where 200 s are left, then
# small_fwd_probe.py at the forward T <= 256 rows (about 90 s; session 25 ran it on an H100 only),
# then the rest of campaign_r23a.sh. On an H100 80GB HBM3 (132 SMs, as the H200): campaign_r24b.sh
# (accuracy only, strided heads T 1M; the H200 reached 85 of 120 inputs in session 28).
# Usage: bash scripts/device/session29.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $GPU, $SMS SMs"
T0=$(date +%s); B=${1:-540}
left() { echo $(( B - ($(date +%s) - T0) )); }
case "$GPU" in
  *H200*)
    # a short call (under 400 s) goes to r25a alone
    bash scripts/device/campaign_r25a.sh $([ $B -lt 400 ] && echo $B || echo $(( B * 3 / 5 )))
    # r24b's one unit takes about 160 s on the H200 (see the H100 branch)
    [ $(left) -ge 200 ] && bash scripts/device/campaign_r24b.sh $(left)
    if [ $(left) -gt 240 ]; then
      P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
      PYTHONPATH=$PWD timeout 150 python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
        --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 \
        > $OUT/small-fwd-probe.log 2>&1
      grep -v '^{' $OUT/small-fwd-probe.log | tail -60
    fi
    SKIP=pwr-4k-8192 bash scripts/device/campaign_r23a.sh $(left) ;;
  *H100*) [ "$SMS" = 132 ] || { echo "an H100 with $SMS SMs: its accuracy would not count; nothing measured"; exit 0; }
          # Its one unit took 1.3 s an input on the H200 (session 28: 85 inputs in 112 s), so 120 take
          # about 160 s there and more on an H100; a run with fewer inputs qualifies nothing (inputs do
          # not add up over runs: measurements_db.aggregates).
          [ "$B" -ge 300 ] || { echo "$B s is too short for r24b's 120 inputs per family: nothing measured"; exit 0; }
          bash scripts/device/campaign_r24b.sh $B ;;
  *) echo "neither an H200 nor an H100: nothing measured" ;;
esac
