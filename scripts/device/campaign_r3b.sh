#!/usr/bin/env bash
# H200 campaign round 3b (2026-12-02, session 3): qualify the large-T points (120 inputs per family,
# fused FP64 oracle) of the compensated programs that are fastest there in rounds 1-3a, per H; then
# time H 6144 at T 1M (round 3a's session 1 ran out of memory there). Carries .whlA: Liger for the
# peers, and part one of the CUTLASS DSL wheel (left in /tmp/wheels for round 3c, which must follow
# within the machine's 30 s warm window).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers.log 2>&1; cat /tmp/setup_peers.log
FINAL=$OUT; W=/tmp/c3b; mkdir -p $W
END=$(( $(date +%s) + ${1:-440} ))
python -m pytest -q -x -p no:cacheprovider tests/cake_kernels/test_reference_fp64.py -k gpu 2>&1 | tail -3 | tee $W/oracle-gpu-test.log
grep -q " passed" $W/oracle-gpu-test.log && ! grep -q failed $W/oracle-gpu-test.log && OK=1 || { echo "fused oracle failed on the GPU: no qualification runs"; OK=0; }
QUAL="--ops bwd --sessions 1 --rounds 3 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 8"
run() {  # name, then measure's arguments
  local name=$1; shift
  [ "$OK" = 0 ] && [ "${name:0:1}" = q ] && return
  local left=$(( END - $(date +%s) - 10 ))
  [ $left -lt 25 ] && { echo "$name: skipped (no time left)"; return; }
  timeout $left python -m cake_router measure "$@" --budget-minutes $(python3 -c "print(round(($left-10)/60,2))") \
    --work-dir $W/$name > $W/$name.log 2>&1
  echo "$name: rc=$? $(grep -h '\] plain' $W/$name.log | tr '\n' ' ')"
  [ -f $W/$name/evidence.jsonl ] && gzip -c $W/$name/evidence.jsonl > $W/r3b-$name.jsonl.gz
}
run q512 --H 512 --T 65536,1048576 --programs bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum.p4x.w4.fw.pf $QUAL
run q1536 --H 1536 --T 65536,1048576 --programs bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum_pair.p4x.r2.w4.fw.pf $QUAL
run q2048 --H 2048 --T 1048576 --programs bwd.twosum_pair.p2x.r2.w8.fw.pf $QUAL
run q4096 --H 4096 --T 1048576 --programs bwd.twosum_pair.p2x.w4.fw.pf $QUAL
run q5120 --H 5120 --T 65536,1048576 --programs bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum.p2x.w8.fw.pf $QUAL
run q6144 --H 6144 --T 65536,1048576 --programs bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum.p1x.w16.fw.pf $QUAL
run q8192 --H 8192 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf $QUAL
P=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r2.w8,fwd.row.r4.w4,fwd.row.r8.w4,fwd.persist.p2x.r1.w8,fwd.persist.p4x.r1.w4,fwd.persist.p8x.r2.w4
P=$P,bwd.atomic,bwd.pair,bwd.twosum
run t6144 --H 6144 --T 1048576 --forms plain --w-dtypes fp32 --programs $P --peers peer.liger --ops fwd,bwd,2xfwd+bwd \
  --sessions 2 --seconds-per-unit 5 --large-T-inputs 0 --accuracy-max-T 4096
cd $W && tar czf $FINAL/r3b.tar.gz *.log */plan.json */*.failures.jsonl r3b-*.jsonl.gz 2>/dev/null; ls -la $FINAL
