#!/usr/bin/env bash
# H200 campaign round 5a (session 5, 2026-12-03). Carries .whlA (Liger; part one of the CUTLASS DSL
# wheel, left in /tmp/wheels for 5b, which must follow within the 30 s warm window with .whlB).
#  0. GPU selftest of the new programs against the FP64 oracle: the wide-reduce backward programs
#     (`.wr`) and the prefetching persistent forward programs (`fwd.persist.*.pf`).
#  1. probe: plain rows, FP32 weight, every H at T 4096, 65536 and 1M, the new programs next to the
#     incumbents that route there (2 sessions; accuracy at T 4096 only: timing first).
#  2. qual65k: qualification (120 inputs per family) at T 65536 of the `.wr` programs most likely to
#     route there (the wide-reduce twins of the round-4 winners, and the 8-programs-per-SM shapes).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers5.log 2>&1; cat /tmp/setup_peers5.log
FINAL=$OUT; W=/tmp/c5a; mkdir -p $W
END=$(( $(date +%s) + ${1:-530} ))
PREFIX=r5a; . scripts/device/run_measure.sh
NEW=$(python3 -c "
from cake_kernels import registry
print(','.join(p.name for p in registry.all_programs() if p.launch.reduce == 'wide' or (p.op == 'fwd' and p.launch.prefetch)))")
timeout 100 python -m cake_kernels.selftest --H 512,1536,5120 --T 1,4096 --families gaussian,same_sign --forms plain \
  --w-dtypes fp32 --programs $NEW --json $W/selftest-new.json > $W/selftest-new.log 2>&1; echo "selftest rc=$?"; tail -4 $W/selftest-new.log
INC=fwd.row.r1.w4,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.row.r1.w4.sp,fwd.persist.p4x.r1.w4.sp
INC=$INC,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf
INC=$INC,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf,bwd.twosum.p1x.w16.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf.sp
INC=$INC,bwd.twosum_pair.p2x.w8.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp,bwd.atomic.p4x.w4.pf
PEND=$END; END=$(( END - 130 ))
run probe --H 512,1536,2048,4096,5120,6144,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $NEW,$INC --peers none --ops fwd,bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 11
END=$PEND
Q=bwd.twosum_pair.p8x.w4.fw.pf.wr,bwd.twosum_pair.p4x.w4.fw.pf.wr,bwd.twosum_pair.p8x.w2.fw.pf.wr
Q=$Q,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr,bwd.twosum_pair.p2x.w16.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr
Q=$Q,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p2x.w16.fw.pf.wr.sp
run qual65k --H 512,1536,2048,4096,5120,6144,8192 --T 65536 --programs $Q --ops bwd --sessions 1 --seconds-per-unit 2 \
  --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 7
for T in 4096 65536 1048576; do for op in fwd bwd; do echo "fastest $op T=$T:"
  python3 scripts/device/pick_fastest.py $W/probe/evidence.jsonl --op $op --T $T --top 3; done; done 2>&1 | tee $W/fastest.txt
cd $W && tar czf $FINAL/r5a.tar.gz *.log selftest-new.json fastest.txt */plan.json */*.failures.jsonl r5a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
