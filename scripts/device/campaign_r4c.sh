#!/usr/bin/env bash
# H200 campaign round 4c (session 4, 2026-12-02), after 4b (warm: QuACK stays installed in /tmp/site).
#  1. Qualification at T 1M (120 inputs per family, fused FP64 oracle) of the fastest compensated
#     programs at H 6144 and 8192, the last plain FP32 gaps; the split-row variant at 6144 joins
#     when 4a's selftest passed it.
#  2. The residual form at H 6144, both weight dtypes, T 1, 16, 256, 4096, 65536, accuracy at every T.
#  3. QuACK tuned and torch.compile (default, max-autotune-no-cudagraphs) at the peer table's T.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers5.log 2>&1; cat /tmp/setup_peers5.log
FINAL=$OUT; W=/tmp/c4c; mkdir -p $W
END=$(( $(date +%s) + ${1:-500} ))
PREFIX=r4c; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
SP=$(python3 - <<'PY'
import json
try:
    rows = json.load(open("/tmp/c4a/selftest-new.json"))["rows"]
except Exception:
    rows = []
r = [x for x in rows if x["program"] == "bwd.twosum_pair.p1x.w16.fw.pf.sp"]
print("bwd.twosum_pair.p1x.w16.fw.pf.sp" if r and all(x["dw_err_over_tol"] <= 0.5 and x["dx_err_over_tol"] <= 1 and x["reproducible"] for x in r) else "")
PY
)
QUAL="--ops bwd --sessions 1 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 8"
run q6144 --H 6144 --T 1048576 --programs bwd.twosum_pair.p1x.w16.fw.pf${SP:+,$SP} $QUAL
run q8192 --H 8192 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf $QUAL
run residual --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,16,256,4096,65536 --programs $F,$B \
  --peers peer.eager,peer.liger,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 10
run tuned --H 2048,4096,8192 --T 1,256,4096,65536,1048576 --forms plain --w-dtypes fp32 --programs $F,$B \
  --peers peer.quack.tuned,peer.torch_compile.default,peer.torch_compile.max_autotune --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 2 --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 15
cd $W && tar czf $FINAL/r4c.tar.gz *.log */plan.json */*.failures.jsonl r4c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
