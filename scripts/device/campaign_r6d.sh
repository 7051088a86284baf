#!/usr/bin/env bash
# H200 campaign round 6d (session 6, 2026-12-03): the last device minutes, a fresh machine, no peers.
#  1. residual-small: H 6144, FP32 weight, T 1 and 16, qualified (120 inputs per family): round 4
#     sampled T 1 with 1 input per family, so the solver left T 1-255 without an eligible program.
#  2. q1m-bf16-H: qualification at T 1M (BF16 weight) of the compensated program 6b timed fastest
#     there, narrow rows first (each costs 15-100 s), until the time is spent. 6b timed T 1M with a
#     BF16 weight for the first time, so without this the span above T 65536 has no eligible program.
# Every finished run is copied to $OUT at once (the session's device budget may end the call).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
FINAL=$OUT; W=/tmp/c6d; mkdir -p $W
END=$(( $(date +%s) + ${1:-300} ))
PREFIX=r6d; . scripts/device/run_measure.sh
save() { (cd $W && cp -f *.log r6d-*.jsonl.gz $FINAL/ 2>/dev/null); }
F=fwd.row.r1.w4,fwd.row.r1.w16,fwd.persist.p4x.r1.w4,fwd.persist.p8x.r1.w4.pf,fwd.row.r1.w4.sp
B=bwd.column_task,bwd.twosum.p1x.w16.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w8.fw.pf.wr
B=$B,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp
run residual-small --H 6144 --forms residual --w-dtypes fp32 --T 1,16 --programs $F,$B \
  --peers peer.eager --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
save
for spec in 512:bwd.twosum_pair.p8x.w4.fw.pf.wr:35 1536:bwd.twosum_pair.p2x.w8.fw.pf.wr:55 \
            2048:bwd.twosum_pair.p2x.w8.fw.pf.wr:62 4096:bwd.twosum_pair.p2x.w4.fw.pf.wr:85 \
            5120:bwd.twosum_pair.p2x.w8.fw.pf.wr.sp:112 6144:bwd.twosum_pair.p2x.w8.fw.pf.wr.sp:130 \
            8192:bwd.twosum_pair.p2x.w4.fw.pf.wr:165; do
  IFS=: read H P NEED <<< "$spec"
  [ $(( END - $(date +%s) )) -lt $NEED ] && { echo "q1m-bf16-$H: skipped (needs about $NEED s)"; continue; }
  run q1m-bf16-$H --H $H --T 1048576 --programs $P --ops bwd --sessions 1 --seconds-per-unit 1 \
    --inputs-per-family 120 --peers none --forms plain --w-dtypes bf16 --wave-units 1
  save
done
ls -la $FINAL
