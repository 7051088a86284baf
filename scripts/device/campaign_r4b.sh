#!/usr/bin/env bash
# H200 campaign round 4b (session 4, 2026-12-02). 4a's machine went cold before the QuACK wheel's
# second part could follow, so this call carries .whlA again (Liger; part one of the CUTLASS DSL
# wheel, left in /tmp/wheels for 4c, which must follow within the 30 s warm window).
#  1. Qualification at T 1M (120 inputs per family, fused FP64 oracle) of the fastest compensated
#     programs at H 6144 and 8192: the last plain FP32 gaps.
#  2. The split-row programs (.sp, passed 4a's selftest) timed beside the incumbents at H 5120, 6144.
#  3. torch.compile (default) of the explicit reference (whole-tensor forward, fixed after 4a's
#     smoke run showed the row-chunk loop unrolled) at every H and the peer table's T; then
#     max-autotune-no-cudagraphs where time is left.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers.log 2>&1; cat /tmp/setup_peers.log
FINAL=$OUT; W=/tmp/c4b; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r4b; . scripts/device/run_measure.sh
QUAL="--ops bwd --sessions 1 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 8"
run q6144 --H 6144 --T 1048576 --programs bwd.twosum_pair.p4x.w4.fw.pf $QUAL
run q8192 --H 8192 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf $QUAL
SP=fwd.row.r1.w4.sp,fwd.persist.p4x.r1.w4.sp,fwd.persist.p2x.r1.w8.sp,bwd.pair.p2x.w8.pf.sp,bwd.twosum_pair.p1x.w16.fw.pf.sp
SP=$SP,bwd.twosum.p2x.w8.fw.pf.sp,bwd.twosum_pair.p2x.w8.fw.pf.sp,bwd.atomic.p2x.w8.pf.sp,bwd.twosum.p1x.w16.fw.pf.sp
INC=fwd.row.r1.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,bwd.pair.p2x.w8.pf,bwd.twosum_pair.p1x.w16.fw.pf
INC=$INC,bwd.twosum.p2x.w8.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.w8.fw.pf,bwd.twosum.p1x.w16.fw.pf
run split --H 5120,6144 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 --programs $SP,$INC --peers none \
  --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 6
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
CEND=$END; END=$(( END - 100 ))
run compile --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $F,$B --peers peer.torch_compile.default,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 \
  --seconds-per-unit 2 --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 18
END=$CEND
run autotune --H 2048,8192 --T 4096,65536 --forms plain --w-dtypes fp32 --programs fwd.row.r1.w4,fwd.persist.p2x.r1.w8,bwd.twosum.p2x.w8.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf \
  --peers peer.torch_compile.max_autotune --ops fwd,bwd,2xfwd+bwd --sessions 1 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 4
cd $W && tar czf $FINAL/r4b.tar.gz *.log */plan.json */*.failures.jsonl r4b-*.jsonl.gz 2>/dev/null; ls -la $FINAL
