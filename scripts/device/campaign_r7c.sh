#!/usr/bin/env bash
# H200 campaign round 7c (session 7, third call, warm after r7b; whatever time is left):
#  1. heads7: the round-7 multi-row programs on the 256-wide head rows (both head forms, both weights,
#     T 65536, qualified) beside the incumbent p16x.w1.
#  2. Cross-weight qualification: programs that won a key with one weight dtype, measured and
#     qualified for the other (a backward's speed does not depend on the weight's dtype; the evidence
#     had them for one only): H 6144 FP32 T 65536 (.wr.sp), H 4096 BF16 T 1M (p2x.w4.fw.pf).
#  3. ncu of the H 512 rows kernels (p8x.w2 one-row against the round-7 multi-row programs), T 65536.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
FINAL=$OUT; W=/tmp/c7c; mkdir -p $W
END=$(( $(date +%s) + ${1:-300} ))
PREFIX=r7c; . scripts/device/run_measure.sh
TP=bwd.twosum_pair
END0=$END; END=$(( END0 - ${NSECS:-45} ))
run heads7 --forms heads_contiguous,heads_strided --w-dtypes bf16,fp32 --T 65536 \
  --programs $TP.p16x.w1.fw.pf.wr,$TP.p10x.w2.fw.pf.wr,$TP.p7x.r2.w2.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr \
  --peers none --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 4
run x6144 --H 6144 --forms plain --w-dtypes fp32 --T 65536 --programs $TP.p2x.w8.fw.pf.wr.sp,$TP.p1x.w16.fw.pf.wr \
  --peers none --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
run x4096 --H 4096 --forms plain --w-dtypes bf16 --T 1048576 --programs $TP.p2x.w4.fw.pf,$TP.p2x.w4.fw.pf.wr \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
END=$END0
left=$(( END - $(date +%s) - 5 ))
[ $left -gt 20 ] && timeout $left ncu --clock-control none --kernel-name regex:rmsnorm_bwd_rows --section SpeedOfLight \
  --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --csv --page details \
  python scripts/device/ncu_bwd.py --H 512 --T 65536 \
  --programs $TP.p8x.w2.fw.pf.wr,$TP.p10x.w2.fw.pf.wr,$TP.p7x.r2.w2.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr > $FINAL/ncu7-H512.csv 2>&1
echo "ncu rc=$?"
cd $W && tar czf $FINAL/r7c.tar.gz *.log */plan.json */*.failures.jsonl r7c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
