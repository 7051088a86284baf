#!/usr/bin/env bash
# H200 campaign round 7a (session 7, first call): the T 1M qualifications with a BF16 weight at
# H 5120, 6144 and 8192 (the table's one loud span; campaign_r6c's first part, 110-165 s each), then
# the round-7 backward probe (campaign_r7b's first part) with the time left. The probe's JSON stays
# in /tmp/c7-probe on the machine, so r7b (the next call, while warm) picks from it without re-running it.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
FINAL=$OUT; W=/tmp/c7a; mkdir -p $W /tmp/c7-probe
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r7a; . scripts/device/run_measure.sh
for spec in 5120:bwd.twosum_pair.p2x.w8.fw.pf.wr.sp 6144:bwd.twosum_pair.p2x.w8.fw.pf.wr.sp 8192:bwd.twosum_pair.p2x.w4.fw.pf.wr; do
  run q1m-bf16-${spec%%:*} --H ${spec%%:*} --T 1048576 --programs ${spec#*:} --ops bwd --sessions 1 --seconds-per-unit 1 \
    --inputs-per-family 120 --peers none --forms plain --w-dtypes bf16 --wave-units 1
done
left=$(( END - $(date +%s) - 10 ))
if [ $left -gt 60 ]; then
  TP=bwd.twosum_pair
  OUT=/tmp/c7-probe timeout $left python scripts/device/twosum_probe.py --H 512,2048 --T 65536,1048576 --acc-T 1048576 \
    --programs $TP.p8x.w2.fw.pf.wr,$TP.p8x.w4.fw.pf.wr,$TP.p2x.w8.fw.pf.wr,$TP.p2x.r2.w8.fw.pf.wr,$TP.p10x.w2,$TP.p7x.r2.w2,$TP.p4x.r4.w2,$TP.p1x.r4.w8,$TP.p1x.r8.w16,bwd.atomic.p4x.w4.pf \
    --variants 12x.r1.w2,11x.r1.w1,16x.r1.w1,6x.r2.w2,8x.r2.w2,3x.r4.w2,5x.r4.w2,9x.r1.w4,5x.r2.w4,2x.r8.w4,4x.r1.w2,2x.r2.w4,1x.r2.w8,3x.r1.w4,2x.r4.w8,1x.r8.w8 \
    > /tmp/c7-probe/probe.log 2>&1
  echo "probe rc=$?"; grep -v Warn /tmp/c7-probe/probe.log | tail -100
  cp /tmp/c7-probe/* $FINAL/ 2>/dev/null
fi
cd $W && tar czf $FINAL/r7a.tar.gz *.log */plan.json */*.failures.jsonl r7a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
