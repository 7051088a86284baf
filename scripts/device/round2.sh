#!/usr/bin/env bash
# Device call of 2026-12-02 (session 2): twosum probe over every H, ncu of the prefetch variants,
# kill -9 / --resume of a real measure, compute-sanitizer memcheck (every program, odd shapes) and racecheck.
export PYTHONPATH=$PWD
FINAL=$OUT; R=/tmp/r2; mkdir -p $R; export OUT=$R  # $OUT takes at most 8 files back: everything goes into one archive
P=bwd.pair.p2x,bwd.pair.p4x.w4,bwd.atomic.p4x.w4,bwd.atomic.p2x.r2.w8,bwd.twosum_pair.p1x.w16.fw,bwd.twosum_pair.p2x.w8.fw,bwd.twosum_pair.p4x.w4.fw,bwd.twosum_pair.p2x.w4.fw,bwd.twosum_pair.p2x.r2.w8.fw,bwd.twosum_pair.p4x.r2.w4.fw,bwd.twosum.p1x.w16.fw,bwd.twosum.p2x.w8.fw,bwd.twosum.p4x.w4.fw
timeout 260 python scripts/device/twosum_probe.py --H 512,1536,2048,4096,5120,6144,8192 --T 262144,1048576 --acc-T 1048576 --programs $P 2>&1 | grep -v Warning > $OUT/twosum-probe2.log
echo "probe rc=$? $(wc -l < $OUT/twosum-probe2.log) lines"
timeout 60 ncu --clock-control none --kernel-name regex:rmsnorm_bwd_rows --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --csv --page details python scripts/device/ncu_bwd.py --H 8192 --T 262144 --programs bwd.twosum_pair.p1x.w16.fw,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.pair.p2x.w8.pf > $OUT/ncu2-H8192.csv 2>&1; echo "ncu rc=$?"
mkdir -p $OUT/kill_resume
( timeout 200 bash scripts/device/kill_resume.sh $OUT/kill_resume > $OUT/kill_resume/stdout.log 2>&1; echo "kill_resume rc=$?" >> $OUT/kill_resume/stdout.log ) &
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
i=0
for grp in fwd. bwd.atomic,bwd.pair,bwd.blocked bwd.twosum_pair bwd.twosum.,bwd.column_task; do
  i=$((i+1)); ( timeout 210 compute-sanitizer --tool memcheck --error-exitcode 9 python scripts/device/sanitize.py --programs $grp > $OUT/memcheck-$i.log 2>&1; echo "memcheck group $grp rc=$?" >> $OUT/memcheck-$i.log ) &
done
( timeout 210 compute-sanitizer --tool racecheck --error-exitcode 9 python scripts/device/sanitize.py --shapes small --programs fwd.row.r1.w4,fwd.persist.p2x.r2.w8,bwd.pair.p2x.r2.w8.pf,bwd.twosum.p2x.r2.w8.fw,bwd.twosum_pair.p2x.w8.fw.pf,bwd.column_task.c64.w4,bwd.atomic.p2x.w8,bwd.blocked.p2x.f16.w8 > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?" >> $OUT/racecheck.log ) &
wait
tail -n 2 $OUT/memcheck-*.log $OUT/racecheck.log; tail -n 8 $OUT/kill_resume/stdout.log
tar czf $FINAL/round2.tar.gz -C /tmp r2; cp $R/twosum-probe2.log $FINAL/
