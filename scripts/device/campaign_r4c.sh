#!/usr/bin/env bash
# H200 campaign round 4c (session 4, 2026-12-02), right after 4b on the same warm machine. Carries
# .whlB (part two of the CUTLASS DSL wheel; 4b left part one in /tmp/wheels).
#  1. QuACK 0.6.5 heuristic (module lookup fixed after round 3c) and Liger next to the routed
#     program set, plain rows, FP32 weight, every H at the peer table's T (1, 256, 4096, 65536, 1M).
#  2. The head forms (H 256 per head), both weight dtypes, T 1, 256, 4096, 65536, accuracy
#     (120 inputs per family) at every T; with the four-row tiles (passed 4a's selftest).
#  3. The residual form at H 6144, both weight dtypes, same T and accuracy.
#  4. QuACK tuned (autotuned before timing) next to the heuristic at H 4096 and 8192, T >= 4096.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers4.log 2>&1; cat /tmp/setup_peers4.log
FINAL=$OUT; W=/tmp/c4c; mkdir -p $W
END=$(( $(date +%s) + ${1:-520} ))
PREFIX=r4c; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
QEND=$END; END=$(( $(date +%s) + 200 ))
run quack --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $F,$B --peers peer.quack.heuristic,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 18
END=$QEND
# All five passed 4a's selftest (bench/results/h200-2026-12-02d/selftest-new-programs.json).
R4=bwd.atomic.p4x.r4.w4.pf,bwd.pair.p4x.r4.w4.pf,bwd.twosum_pair.p4x.r4.w4.fw.pf,bwd.twosum.p4x.r4.w4.fw.pf,bwd.twosum_pair.p8x.r4.w4.fw.pf
echo "four-row tiles joining the head forms: ${R4:-none}"
HEND=$END; END=$(( END - 170 ))
run heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 1,256,4096,65536 \
  --programs $F,fwd.row.r8.w4,$B${R4:+,$R4} --peers peer.eager,peer.liger,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 2 --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 10
END=$(( HEND - 70 ))
run residual --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,256,4096,65536 --programs $F,$B \
  --peers peer.eager,peer.liger,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 8
END=$HEND
run tuned --H 4096,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs fwd.row.r4.w4,fwd.persist.p2x.r1.w8,bwd.pair.p2x.w8.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf \
  --peers peer.quack.tuned,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 6
cd $W && tar czf $FINAL/r4c.tar.gz *.log */plan.json */*.failures.jsonl r4c-*.jsonl.gz /tmp/setup_peers4.log 2>/dev/null; ls -la $FINAL
