#!/usr/bin/env bash
# H200 campaign round 6c, written in session 6 and never run as a whole. Its first part (the BF16 T 1M
# qualifications at H 5120-8192) ran in session 7 as campaign_r7a.sh and is no longer here; what is
# left is still to measure (round 7c took the FP32 contiguous heads at T 65536 only). Carries .whlL (Liger).
#  2. heads-fp32c: contiguous heads with an FP32 weight (round 5 measured BF16 only), T 1, 256, 4096,
#     65536, qualified.
#  3. compile: torch.compile default at H 5120, 6144 and 8192 (FP32 weight, T 4096 and 65536) next to
#     the routed programs.
#  4. Q1M ("H:program ..." in the environment): qualification at T 1M of the programs those calls timed fastest.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers6c.log 2>&1; cat /tmp/setup_peers6c.log
FINAL=$OUT; W=/tmp/c6c; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r6c; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r1.w16,fwd.row.r8.w4,fwd.persist.p4x.r1.w4,fwd.persist.p8x.r1.w4.pf
F=$F,fwd.persist.p8x.r2.w4.pf,fwd.persist.p4x.r1.w4.pf
HB=bwd.column_task.c32.w4,bwd.twosum.p2x.w8.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf.wr,bwd.twosum_pair.p16x.w1.fw.pf.wr
HB=$HB,bwd.twosum_pair.p16x.w2.fw.pf.wr,bwd.twosum_pair.p8x.w2.fw.pf.wr,bwd.twosum_pair.p8x.w4.fw.pf.wr
HB=$HB,bwd.twosum_pair.p2x.w8.fw.pf.wr,bwd.twosum_pair.p8x.w4.s8.wr.tma,bwd.twosum_pair.p7x.w4.s4.wr.tma
HEND=$END; END=$(( END - ${CSECS:-200} ))
run heads-fp32c --forms heads_contiguous --w-dtypes fp32 --T 1,256,4096,65536 --programs $F,$HB \
  --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 4
END=$(( HEND - ${QSECS:-100} ))
CP=bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp
CP=$CP,bwd.twosum.p2x.w8.fw.pf,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r1.w4.pf.sp,fwd.row.r4.w4
run compile --H 5120,6144,8192 --forms plain --w-dtypes fp32 --T 4096,65536 --programs $CP \
  --peers peer.torch_compile.default --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 65536 --inputs-per-family 8 --wave-units 6
END=$HEND
for spec in $Q1M; do  # H:program
  run q1m-${spec%%:*} --H ${spec%%:*} --T 1048576 --programs ${spec#*:} --ops bwd --sessions 1 --seconds-per-unit 2 \
    --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 1
done
cd $W && tar czf $FINAL/r6c.tar.gz *.log */plan.json */*.failures.jsonl r6c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
