#!/usr/bin/env bash
# H200 campaign round 5c (session 5, 2026-12-03), a fresh machine after 5b. Carries .whlL (Liger).
#  1. heads: both head forms (H 256 per head), both weight dtypes, T 1, 256, 4096, 65536, accuracy
#     (120 inputs per family) at every T, with the 8- and 16-programs-per-SM wide-reduce programs.
#  2. residual: H 6144, FP32 weight, T 256, 4096, 65536 with accuracy (round 4 sampled T 1 only).
#  3. q1m-sp: qualification at T 1M of the split-row wide-reduce programs 5a timed fastest at H 5120
#     and 6144.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers5c.log 2>&1; cat /tmp/setup_peers5c.log
FINAL=$OUT; W=/tmp/c5c; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r5c; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r8.w4,fwd.persist.p4x.r1.w4,fwd.persist.p8x.r1.w4.pf,fwd.persist.p8x.r2.w4.pf,fwd.persist.p4x.r1.w4.pf
B=bwd.column_task.c32.w4,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf
B=$B,bwd.twosum_pair.p16x.w1.fw.pf.wr,bwd.twosum_pair.p16x.w2.fw.pf.wr,bwd.twosum_pair.p8x.w2.fw.pf.wr
B=$B,bwd.twosum_pair.p8x.w4.fw.pf.wr,bwd.twosum_pair.p4x.w4.fw.pf.wr,bwd.twosum_pair.p2x.w8.fw.pf.wr
HEND=$END; END=$(( END - 300 ))
run heads --forms heads_strided,heads_contiguous --w-dtypes fp32,bf16 --T 1,256,4096,65536 \
  --programs $F,$B --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 2 --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 8
END=$(( HEND - 200 ))
SP=fwd.row.r1.w4.sp,fwd.persist.p8x.r1.w4.pf.sp,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp
run residual --H 6144 --forms residual --w-dtypes fp32 --T 256,4096,65536 --programs $F,$B,$SP \
  --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 3
END=$HEND
QUAL="--ops bwd --sessions 1 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 1"
run q1m-5120 --H 5120 --T 1048576 --programs bwd.twosum_pair.p1x.w16.fw.pf.wr.sp $QUAL
run q1m-6144 --H 6144 --T 1048576 --programs bwd.twosum_pair.p2x.w8.fw.pf.wr.sp $QUAL
cd $W && tar czf $FINAL/r5c.tar.gz *.log */plan.json */*.failures.jsonl r5c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
