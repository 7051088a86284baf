#!/usr/bin/env bash
# H200 campaign round 6a (session 6, 2026-12-03). Carries .whlA (Liger; part one of the CUTLASS DSL
# wheel, left in /tmp/wheels for 6b, which must follow within the 30 s warm window with .whlB).
#  0. GPU selftest of the `.tma` backward programs against the FP64 oracle (plain, residual and
#     contiguous heads; the strided heads take the pointer fallback).
#  1. probe-tma: plain rows, FP32 weight, every H at T 4096, 65536 and 1M: the `.tma` programs next
#     to the pointer programs that route there (2 sessions, timing; accuracy at T 4096).
#  2. bf16: plain rows with a BF16 weight (last measured in round 4 with 13 programs) at T 4096 and
#     65536 with the round-5 programs and the `.tma` ones, every forward program, Liger; fwd, bwd and
#     2xfwd+bwd, accuracy qualified (120 inputs per family).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers6a.log 2>&1; cat /tmp/setup_peers6a.log
FINAL=$OUT; W=/tmp/c6a; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r6a; . scripts/device/run_measure.sh
TMA=$(python3 -c "
from cake_kernels import registry
print(','.join(p.name for p in registry.all_programs() if p.launch.loads == 'tma'))")
timeout 110 python -m cake_kernels.selftest --H 256,512,1536,4096,8192 --T 1,4096 --families gaussian,same_sign \
  --forms plain,residual,heads_contiguous,heads_strided --w-dtypes fp32,bf16 --programs $TMA \
  --json $W/selftest-tma.json > $W/selftest-tma.log 2>&1; echo "selftest rc=$?"; tail -14 $W/selftest-tma.log
INC=bwd.twosum_pair.p2x.w8.fw.pf.wr,bwd.twosum_pair.p8x.w2.fw.pf.wr,bwd.twosum_pair.p8x.w4.fw.pf.wr
INC=$INC,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf
INC=$INC,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p1x.w16.fw.pf.wr,bwd.twosum_pair.p1x.w16.fw.pf
INC=$INC,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp,bwd.twosum.p2x.w8.fw.pf
PEND=$END; END=$(( END - 330 ))
run probe-tma --H 512,1536,2048,4096,5120,6144,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $TMA,$INC --peers none --ops bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 11
END=$PEND
for T in 65536 1048576; do echo "fastest bwd T=$T:"
  python3 scripts/device/pick_fastest.py $W/probe-tma/evidence.jsonl --op bwd --T $T --top 3; done 2>&1 | tee $W/fastest.txt
B16=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B16=$B16,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p2x.w16.fw.pf.wr
run bf16 --H 512,1536,2048,4096,5120,6144,8192 --T 4096,65536 --forms plain --w-dtypes bf16 \
  --programs fwd.row,fwd.persist,$B16,$INC,$TMA --peers peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 \
  --seconds-per-unit 2 --inputs-per-family 120 --accuracy-max-T 65536 --wave-units 7
cd $W && tar czf $FINAL/r6a.tar.gz *.log selftest-tma.json fastest.txt */plan.json */*.failures.jsonl r6a-*.jsonl.gz 2>/dev/null; ls -la $FINAL
