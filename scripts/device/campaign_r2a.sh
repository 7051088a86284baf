#!/usr/bin/env bash
# H200 campaign round 2a (2026-12-02): the registered-program set of round 2 at the large-T points of
# the keys measured in round 1 (plain rows, FP32 weight, H 2048/4096/8192, T 65536 and 1M), with the
# Liger and eager peers; preceded by the kill -9 / --resume check of a real measure.
# Run on the device with .whlL (the Liger wheel) carried. Brings back the evidence (gzipped) and logs.
export PYTHONPATH=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whlL/*.whl \
  && export PYTHONPATH=$PWD:/tmp/site
FINAL=$OUT; W=/tmp/c2; mkdir -p $W
timeout 150 bash scripts/device/kill_resume.sh $W/kill_resume > $W/kill_resume.log 2>&1
P=bwd.pair.p2x.w8,bwd.pair.p4x.w4,bwd.pair.p2x.r2.w8,bwd.atomic.p4x.w4,bwd.atomic.p2x.r2.w8
P=$P,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w8.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf
P=$P,bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum_pair.p4x.r2.w4.fw.pf,bwd.twosum.p1x.w16.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
timeout 480 python -m cake_router measure --H 2048,4096,8192 --T 65536,1048576 --forms plain --w-dtypes fp32 \
  --ops bwd --programs $P --peers peer.eager,peer.liger --sessions 2 --accuracy-max-T 65536 --large-T-inputs 2 \
  --seconds-per-unit 25 --budget-minutes 7 --work-dir $W/a > $W/a.log 2>&1
echo "measure rc=$?"
gzip -c $W/a/evidence.jsonl > $FINAL/r2a.jsonl.gz
tar czf $FINAL/r2a-logs.tar.gz -C $W a.log kill_resume.log kill_resume $(cd $W && ls a/*.failures.jsonl a/plan.json 2>/dev/null)
tail -25 $W/a.log; cat $W/kill_resume/summary.txt
