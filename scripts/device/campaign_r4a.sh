#!/usr/bin/env bash
# Prepared in session 3 (2026-12-02) for the next H200 session; not yet run. Round 4a: the programs
# added after round 3 (split rows `.sp` for H 5120/6144, four-row tiles `.r4` for H <= 2048) next to
# the incumbents, then the large-T qualification that round 3b's budget cut (H 6144 and 8192 at
# T 1M; 120 inputs per family, fused FP64 oracle). Carries .whlA (Liger; part one of the CUTLASS DSL
# wheel stays in /tmp/wheels for round 4b, which must follow within the 30 s warm window).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers.log 2>&1; cat /tmp/setup_peers.log
FINAL=$OUT; W=/tmp/c4a; mkdir -p $W
END=$(( $(date +%s) + ${1:-480} ))
# 1. the new programs on the GPU against FP64 before any timing (compiled by Triton 3.6 here)
NEW=bwd.atomic.p4x.r4.w4.pf,bwd.pair.p4x.r4.w4.pf,bwd.twosum_pair.p4x.r4.w4.fw.pf,bwd.twosum.p4x.r4.w4.fw.pf
NEW=$NEW,bwd.twosum_pair.p8x.r4.w4.fw.pf,fwd.row.r1.w4.sp,fwd.persist.p4x.r1.w4.sp,fwd.persist.p2x.r1.w8.sp
NEW=$NEW,bwd.atomic.p2x.w8.pf.sp,bwd.pair.p2x.w8.pf.sp,bwd.twosum_pair.p1x.w16.fw.pf.sp,bwd.twosum_pair.p2x.w8.fw.pf.sp
NEW=$NEW,bwd.twosum.p1x.w16.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp
timeout 120 python -m cake_kernels.selftest --H 512,1536,5120,6144 --T 1,4096 --families gaussian,same_sign \
  --programs $NEW --json $W/selftest-new.json > $W/selftest-new.log 2>&1; echo "selftest rc=$?"; tail -5 $W/selftest-new.log
PREFIX=r4a; . scripts/device/run_measure.sh
# 2. new programs side by side with round 3's winners there (coarse grid, accuracy at T <= 4096)
INC=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.atomic.p4x.w4.pf,bwd.atomic.p2x.w8.pf,bwd.pair.p2x.w8.pf
INC=$INC,bwd.twosum.p1x.w16.fw.pf,bwd.twosum.p4x.w4.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
INC=$INC,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum.p2x.w8.fw.pf,fwd.row.r1.w4,fwd.row.r4.w4,fwd.persist.p4x.r1.w4
COMMON="--T coarse --forms plain --w-dtypes fp32 --peers peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2
  --seconds-per-unit 4 --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 12"
run new --H 512,1536,5120,6144 --programs $NEW,$INC $COMMON
# 3. qualification (120 inputs per family) of the fastest compensated programs where it is missing
QUAL="--ops bwd --sessions 1 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 8"
run q6144 --H 6144 --T 1048576 --programs bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf.sp $QUAL
run q8192 --H 8192 --T 1048576 --programs bwd.twosum.p2x.w8.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf $QUAL
run qnew --H 512,1536,5120,6144 --T 65536 --programs bwd.twosum_pair.p4x.r4.w4.fw.pf,bwd.twosum.p4x.r4.w4.fw.pf,bwd.twosum_pair.p8x.r4.w4.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp $QUAL
cd $W && tar czf $FINAL/r4a.tar.gz *.log selftest-new.json */plan.json */*.failures.jsonl r4a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
