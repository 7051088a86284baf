#!/usr/bin/env bash
# H200 campaign round 7b (session 7, second call, while the machine is warm after r6c): multi-row
# tiles with few warps for narrow rows (registry, round 7 comment).
#  1. twosum_probe: registered candidates and unregistered launch shapes (programs per SM, rows, warps)
#     at H 512 and 2048, T 65536 and 1M (do_bench, cold L2; dw err/tol at T 1M; registers).
#  2. The two fastest registered programs per width at T 1M (from the probe) beside the incumbents,
#     through the harness: H 512 and H 1536/2048, both weights, T 65536 and 1M, qualified at both.
#  3. fwd_probe: forward programs and launch shapes at H 512, 1536 and 2048, T 65536 and 1M; then the
#     round-7 forward programs (fwd.row.r2.w1, r4.w2) beside the incumbents through the harness at H 512.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
FINAL=$OUT; W=/tmp/c7b; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r7b; . scripts/device/run_measure.sh
TP=bwd.twosum_pair
if [ -s /tmp/c7-probe/twosum-probe.json ]; then  # r7a ran it on this machine
  cp /tmp/c7-probe/* $OUT/; echo "probe: from r7a"
else
  timeout ${PSECS:-190} python scripts/device/twosum_probe.py --H 512,2048 --T 65536,1048576 --acc-T 1048576 \
    --programs $TP.p8x.w2.fw.pf.wr,$TP.p8x.w4.fw.pf.wr,$TP.p2x.w8.fw.pf.wr,$TP.p2x.r2.w8.fw.pf.wr,$TP.p10x.w2,$TP.p7x.r2.w2,$TP.p4x.r4.w2,$TP.p1x.r4.w8,$TP.p1x.r8.w16,bwd.atomic.p4x.w4.pf \
    --variants 12x.r1.w2,11x.r1.w1,16x.r1.w1,6x.r2.w2,8x.r2.w2,3x.r4.w2,5x.r4.w2,9x.r1.w4,5x.r2.w4,2x.r8.w4,4x.r1.w2,2x.r2.w4,1x.r2.w8,3x.r1.w4,2x.r4.w8,1x.r8.w8 \
    > $W/probe.log 2>&1
  echo "probe rc=$?"; cat $W/probe.log | grep -v Warn | tail -120
fi
pick() {  # the two fastest registered programs at H $1, T 1M, in the probe
  python3 - "$1" <<'PY'
import json, os, sys
H = int(sys.argv[1])
try:
    rows = json.load(open(os.path.join(os.environ["OUT"], "twosum-probe.json")))["rows"]
except Exception:
    rows = []
ok = sorted((r["us"], r["program"]) for r in rows if r["H"] == H and r["T"] == 1048576 and "us" in r
            and "@" not in r["program"] and r["program"].startswith("bwd.twosum_pair"))
print(",".join(dict.fromkeys(p for _, p in ok[:2])))
PY
}
P512=$(pick 512); P2K=$(pick 2048); echo "picked 512: $P512; 2048: $P2K"
run q7-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 --programs ${P512:+$P512,}$TP.p8x.w2.fw.pf.wr \
  --peers none --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 4
run q7-2k --H 1536,2048 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 --programs ${P2K:+$P2K,}$TP.p2x.r2.w8.fw.pf.wr \
  --peers none --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 4
timeout ${FSECS:-60} python scripts/device/fwd_probe.py --H 512,1536,2048 --T 65536,1048576 \
  --programs fwd.row.r4.w4,fwd.row.r2.w1,fwd.row.r4.w2,fwd.persist.p8x.r1.w4.pf,fwd.persist.p8x.r2.w4.pf,fwd.row.r8.w4 \
  --variants row:r8.w2,row:r2.w2,row:r1.w1,persist:p16x.r2.w1,persist:p8x.r4.w2,persist:p12x.r2.w2,persist:p4x.r4.w4 > $W/fwd-probe.log 2>&1
echo "fwd probe rc=$?"; grep -v Warn $W/fwd-probe.log | tail -60
run f7-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 --programs fwd.row.r2.w1,fwd.row.r4.w2,fwd.row.r4.w4 \
  --peers none --ops fwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 8 --wave-units 4
cd $W && tar czf $FINAL/r7b.tar.gz *.log */plan.json */*.failures.jsonl r7b-*.jsonl.gz 2>/dev/null; ls -la $FINAL
