#!/usr/bin/env bash
# H200 campaign round 3a (2026-12-02, session 3): the keys rounds 1-2 never measured, timing at every
# coarse T and accuracy (120 inputs per family) at T <= 4096; T 65536 and 1M are timed here and
# qualified in a separate accuracy run (inputs of several runs add up). Pruned program set: every
# program that was within 5 % of the best anywhere in rounds 1-2, one per family otherwise, and the
# multi-row tiles that small H needs. Peers: eager and Liger (run with .whlL carried).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whlL/*.whl \
  && export PYTHONPATH=$PWD:/tmp/site
FINAL=$OUT; W=/tmp/c3; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
P=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r2.w8,fwd.row.r4.w4,fwd.row.r8.w4,fwd.persist.p2x.r1.w8,fwd.persist.p4x.r1.w4,fwd.persist.p8x.r2.w4
P=$P,bwd.column_task,bwd.atomic.p1x.w8,bwd.atomic.p2x.w8,bwd.atomic.p4x.w4.pf,bwd.atomic.p2x.r2.w8,bwd.pair.p1x.w8,bwd.pair.p2x.w8
P=$P,bwd.pair.p4x.w4.pf,bwd.pair.p2x.r2.w8,bwd.blocked.p2x.f16.w8,bwd.twosum_pair.p1x.w8,bwd.twosum_pair.p2x.w8,bwd.twosum_pair.p4x.w4
P=$P,bwd.twosum_pair.p8x.w4,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
P=$P,bwd.twosum_pair.p4x.r2.w4.fw.pf,bwd.twosum.p1x.w8,bwd.twosum.p2x.w8,bwd.twosum.p1x.w16.fw.pf,bwd.twosum.p4x.w4.fw.pf
COMMON="--T coarse --programs $P --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 5
  --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 8"
run() {  # name, then measure's selection arguments
  local name=$1; shift
  local left=$(( END - $(date +%s) - 15 ))
  [ $left -lt 40 ] && { echo "$name: skipped (no time left)"; return; }
  timeout $left python -m cake_router measure "$@" $COMMON --budget-minutes $(python3 -c "print(round(($left-20)/60,2))") \
    --work-dir $W/$name > $W/$name.log 2>&1
  echo "$name: rc=$? $(grep -c records $W/$name.log) unit lines"
  [ -f $W/$name/evidence.jsonl ] && gzip -c $W/$name/evidence.jsonl > $FINAL/r3a-$name.jsonl.gz
}
run plain --H 512,1536,5120,6144 --forms plain --w-dtypes fp32
run forms --H 6144 --forms residual,heads_strided,heads_contiguous --w-dtypes fp32
run bf16 --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes bf16
tar czf $FINAL/r3a-logs.tar.gz -C $W $(cd $W && ls *.log */plan.json */*.failures.jsonl 2>/dev/null)
tail -4 $W/*.log
