#!/usr/bin/env bash
# H200 campaign round 4c (session 4, 2026-12-02). The machine went cold after 4b too, so QuACK's split
# wheel has to travel again: this call carries .whlA (Liger; part one of the CUTLASS DSL wheel left in
# /tmp/wheels) and 4d follows within the 30 s warm window with .whlB.
#  1. The head forms (H 256 per head), both weight dtypes, T 1, 256, 4096, 65536, accuracy (120
#     inputs per family) at every T, with the four-row tiles (all five passed 4a's selftest,
#     bench/results/h200-2026-12-02d/selftest-new-programs.json).
#  2. The residual form at H 6144, both weight dtypes, same T and accuracy.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers.log 2>&1; cat /tmp/setup_peers.log
FINAL=$OUT; W=/tmp/c4c; mkdir -p $W
END=$(( $(date +%s) + ${1:-270} ))
PREFIX=r4c; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
R4=bwd.atomic.p4x.r4.w4.pf,bwd.pair.p4x.r4.w4.pf,bwd.twosum_pair.p4x.r4.w4.fw.pf,bwd.twosum.p4x.r4.w4.fw.pf,bwd.twosum_pair.p8x.r4.w4.fw.pf
HEND=$END; END=$(( END - 85 ))
run heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 1,256,4096,65536 \
  --programs $F,fwd.row.r8.w4,$B,$R4 --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 2 --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 8
END=$HEND
SP=fwd.row.r1.w4.sp,bwd.pair.p2x.w8.pf.sp,bwd.twosum_pair.p2x.w8.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp
run residual --H 6144 --forms residual --w-dtypes fp32,bf16 --T 1,256,4096,65536 --programs $F,$B,$SP \
  --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 8
cd $W && tar czf $FINAL/r4c.tar.gz *.log */plan.json */*.failures.jsonl r4c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
