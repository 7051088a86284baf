#!/usr/bin/env bash
# H200 campaign round 4b (session 4, 2026-12-02), right after 4a on the same warm machine. Carries
# .whlB (part two of the CUTLASS DSL wheel; 4a left part one in /tmp/wheels).
#  1. QuACK 0.6.5 heuristic (module lookup fixed after round 3c) and Liger next to the routed
#     program set, plain rows, FP32 weight, every H at the peer table's T (1, 256, 4096, 65536, 1M).
#  2. The head forms (H 256 per head), both weight dtypes, T 1, 256, 4096, 65536, accuracy
#     (120 inputs per family) at every T; the four-row tiles join when 4a's selftest passed them.
#  3. QuACK tuned (autotuned before timing) next to the heuristic at H 4096 and 8192, T >= 4096.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers4.log 2>&1; cat /tmp/setup_peers4.log
FINAL=$OUT; W=/tmp/c4b; mkdir -p $W
END=$(( $(date +%s) + ${1:-520} ))
PREFIX=r4b; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
QEND=$END; END=$(( $(date +%s) + 280 ))
run quack --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $F,$B --peers peer.quack.heuristic,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 18
END=$QEND
R4=$(python3 - <<'PY'
import json
try:
    rows = json.load(open("/tmp/c4a/selftest-new.json"))["rows"]
except Exception:
    rows = []
ok = {}
for r in rows:
    if ".r4." not in r["program"] or r["op"] != "bwd":
        continue
    good = r["dw_err_over_tol"] is not None and r["dx_err_over_tol"] <= 1 and r["reproducible"] is not False
    # atomic/pair programs may leave the dw budget at T 4096 by design; only crashes/garbage disqualify
    good = good and r["dw_err_over_tol"] < 100
    ok[r["program"]] = ok.get(r["program"], True) and good
print(",".join(p for p, g in sorted(ok.items()) if g))
PY
)
echo "four-row tiles joining the head forms: ${R4:-none}"
HEND=$END; END=$(( END - 75 ))
run heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 1,256,4096,65536 \
  --programs $F,fwd.row.r8.w4,$B${R4:+,$R4} --peers peer.eager,peer.liger,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 2 --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 10
END=$HEND
run tuned --H 4096,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs fwd.row.r4.w4,fwd.persist.p2x.r1.w8,bwd.pair.p2x.w8.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf \
  --peers peer.quack.tuned,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 6
cd $W && tar czf $FINAL/r4b.tar.gz *.log */plan.json */*.failures.jsonl r4b-*.jsonl.gz /tmp/setup_peers4.log 2>/dev/null; ls -la $FINAL
