#!/usr/bin/env bash
# The next session's device calls (from session 30). On an H200 (the route table's card):
# campaign_r25a.sh, now timing only where session 30's H100 run qualified its programs (the backward
# floor's H 8192 T 4096 unit, the two-row `.fl` backwards at contiguous heads: the copy target's
# binding row), the one-chunk forwards at the short FP32 forward rows, the `.fl` forwards at T 1M),
# then small_fwd_probe.py at the forward T <= 256 rows where 240 s are left, then the rest of
# campaign_r23a.sh. On an H100 80GB HBM3 (132 SMs, as the H200): campaign_h31a.sh (accuracy only:
# what r23a's remaining units need, so that the H200 can time them without an accuracy pass).
# campaign_r24b.sh is done (session 30: strided heads T 1M qualified on an H100). Session 31 added
# scripts/device/l2_prefetch_probe.py on either card (the `.l2p` / `.l2b` backwards against their base,
# side by side), after r25a on an H200 and first on an H100.
# Usage: bash scripts/device/session31.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
echo "GPU: $GPU, $SMS SMs"
T0=$(date +%s); B=${1:-540}
left() { echo $(( B - ($(date +%s) - T0) )); }
# l2_units PREFIX "MEASURE ARGS" SECONDS [routed,]: one measure unit per key where l2_winners.py finds a registered
# `.l2p4` / `.l2b4` twin faster than its base in this call's probe (none: nothing runs), with the
# routed program beside them when the fourth argument is "routed,".
l2_units() {
  [ -f $OUT/l2-prefetch-probe.json ] || return 0
  PYTHONPATH=$PWD python3 scripts/device/l2_winners.py $OUT/l2-prefetch-probe.json > /tmp/l2-winners.txt || return 0
  echo "L2-prefetch winners:"; cat /tmp/l2-winners.txt
  [ -s /tmp/l2-winners.txt ] || return 0
  ( PREFIX=$1; . scripts/device/campaign_begin.sh $3; i=0
    while read -r form H w T progs; do i=$((i + 1))
      run l2-$i --forms $form --H $H --w-dtypes $w --T $T --ops bwd --programs ${4:-}$progs --peers none $2 < /dev/null
    done < /tmp/l2-winners.txt
    campaign_end )
}
case "$GPU" in
  *H200*)
    bash scripts/device/campaign_r25a.sh $([ $B -lt 400 ] && echo $B || echo $(( B * 3 / 5 )))
    if [ $(left) -gt 200 ]; then  # session 31: does asking tiles into L2 lift the binding backward rows?
      PYTHONPATH=$PWD timeout 170 python3 scripts/device/l2_prefetch_probe.py --ahead 2,4,8 --seconds 110 \
        > $OUT/l2-prefetch-probe.log 2>&1; cat $OUT/l2-prefetch-probe.log
      # where a registered twin gained, qualify and time it at that key beside the routed program
      l2_units r31l "--sessions 2 --seconds-per-unit 0.5 --inputs-per-family 120" $(( $(left) / 2 )) routed,
    fi
    if [ $(left) -gt 240 ]; then
      P='fwd.row.r1.w1.hs$,fwd.row.r1.w1.hs.fs$,fwd.row.r1.w16.hs$,fwd.row.r1.w16.hs.fs$,fwd.row.r1.w4.wx$,fwd.row.r1.w16.wx$,fwd.row.r1.w16$,fwd.row.r1.w8.c2048.hs$,fwd.row.r1.w1.c256.hs$,fwd.row.r1.w8.hs$,fwd.row.r1.w4.hs$'
      PYTHONPATH=$PWD timeout 150 python3 scripts/device/small_fwd_probe.py --programs "$P" --iters 200 \
        --keys plain:4096:fp32:64,heads_strided:256:bf16:1,plain:6144:fp32:64,plain:8192:fp32:256 \
        > $OUT/small-fwd-probe.log 2>&1
      grep -v '^{' $OUT/small-fwd-probe.log | tail -60
    fi
    SKIP=pwr-4k-8192 bash scripts/device/campaign_r23a.sh $(left) ;;
  *H100*) [ "$SMS" = 132 ] || { echo "an H100 with $SMS SMs: its accuracy would not count; nothing measured"; exit 0; }
          # the L2-prefetch probe first: side by side on one card, its ratios answer whether the
          # `.l2p` / `.l2b` programs are worth qualifying and timing on the H200
          PYTHONPATH=$PWD timeout 200 python3 scripts/device/l2_prefetch_probe.py --ahead 2,4,8 --seconds 140 \
            > $OUT/l2-prefetch-probe.log 2>&1; cat $OUT/l2-prefetch-probe.log
          # where a registered twin gained, qualify it (accuracy only) so that an H200 call only times it
          l2_units h31l "--sessions 1 --accuracy-only --inputs-per-family 120" $(( $(left) / 3 ))
          bash scripts/device/campaign_h31a.sh $(left) ;;
  *) echo "neither an H200 nor an H100: nothing measured" ;;
esac
