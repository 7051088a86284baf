#!/usr/bin/env bash
# H200 campaign round 2b (2026-12-02): finish what 2a's budget cut at H 8192 (qualified accuracy at
# T 65536: 120 inputs per family; T 1M timing) for the round-2 programs. No peers: they were timed in 2a.
export PYTHONPATH=$PWD
FINAL=$OUT; W=/tmp/c2; mkdir -p $W
P=bwd.pair.p2x.w8.pf,bwd.pair.p4x.w4.pf,bwd.atomic.p4x.w4.pf,bwd.blocked.p4x.f16.w4
P=$P,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w8.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf
P=$P,bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum_pair.p4x.r2.w4.fw.pf,bwd.twosum.p1x.w16.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
timeout 430 python -m cake_router measure --H 8192 --T 65536,1048576 --forms plain --w-dtypes fp32 \
  --ops bwd --programs $P --peers none --sessions 2 --accuracy-max-T 65536 --large-T-inputs 2 \
  --seconds-per-unit 25 --budget-minutes 6.3 --work-dir $W/b > $W/b.log 2>&1
echo "measure rc=$?"
gzip -c $W/b/evidence.jsonl > $FINAL/r2b.jsonl.gz
cp $W/b.log $FINAL/campaign-r2b.log
tail -12 $W/b.log
