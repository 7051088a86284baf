#!/usr/bin/env bash
# H200 campaign round 8a: the next session's first call (written in session 7; not run yet).
#  0. wdtype_probe: the same programs with either weight dtype, timed, with registers and SASS opcode
#     counts of the builds Triton 3.6 makes (a BF16 weight made backward programs up to 1.42x slower in
#     rounds 6-7, an FP32 weight forward programs up to 1.47x slower; Triton 3.9 builds them alike).
#  1. 2xfwd+bwd for the programs round 7 routed (the bench has no time for those rows), plain rows,
#     both weights, T 65536 and 1M, beside the old routes and the peers.
#  1b. q8-512: bwd.twosum_pair.p8x.r2.w2.fw.pf.wr (the round-7 probe's fastest H 512 shape at T 1M) beside p4x.r4.w2.
#  2. x4096-finish: H 4096 BF16 T 1M qualification (round 7 reached 85 of 120 inputs per family);
#     H 8192 BF16 T 1M for bwd.twosum.p2x.w8.fw.pf (the FP32 key's winner, 14081 against 15603 us).
#  3. heads-large: both head forms at T 262144 and 1M, the head programs, qualified.
# Carries .whlA (QuACK part 1); QuACK is timed only when .whlB also arrived (r8b).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers8a.log 2>&1; cat /tmp/setup_peers8a.log
FINAL=$OUT; W=/tmp/c8a; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r8a; . scripts/device/run_measure.sh
TP=bwd.twosum_pair
timeout ${WSECS:-120} python scripts/device/wdtype_probe.py > $W/wdtype-probe.log 2>&1; echo "wdtype probe rc=$?"
grep -v Warn $W/wdtype-probe.log | tail -20; cp $OUT/wdtype-probe.json $W/ 2>/dev/null
run combo --H 512,1536,2048 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 \
  --programs $TP.p4x.r4.w2.fw.pf.wr,$TP.p1x.r4.w8.fw.pf.wr,$TP.p2x.r2.w8.fw.pf.wr,$TP.p8x.w2.fw.pf.wr,fwd.row.r4.w2,fwd.row.r2.w1 \
  --peers peer.liger,peer.torch_compile.default --ops 2xfwd+bwd --sessions 2 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 6
run q8-512 --H 512 --forms plain --w-dtypes bf16,fp32 --T 65536,1048576 --programs $TP.p8x.r2.w2.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr \
  --peers none --ops bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 4
run q1m-4096 --H 4096 --forms plain --w-dtypes bf16 --T 1048576 --programs $TP.p2x.w4.fw.pf.wr \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 1
run q1m-8192 --H 8192 --forms plain --w-dtypes bf16 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 1
run heads-large --forms heads_contiguous,heads_strided --w-dtypes bf16 --T 262144,1048576 \
  --programs $TP.p16x.w1.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr,fwd.row.r8.w4,fwd.row.r4.w2 \
  --peers peer.liger --ops fwd,bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 4
cd $W && tar czf $FINAL/r8a.tar.gz *.log */plan.json */*.failures.jsonl r8a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
