#!/usr/bin/env bash
# H200 campaign round 4d (session 4, 2026-12-02), right after 4c on the same warm machine. Carries
# .whlB (part two of the CUTLASS DSL wheel). When QuACK is not importable (the machine went cold
# between the calls), its runs are skipped and the time goes to the torch.compile peer.
#  1. QuACK 0.6.5 heuristic next to Liger and the routed program set, plain rows, FP32 weight, every
#     H at the peer table's T (1, 256, 4096, 65536, 1M).
#  2. Qualification at T 65536 (120 inputs per family) of the split-row compensated programs that
#     4b timed fastest at H 5120 and 6144.
#  3. QuACK tuned next to the heuristic at H 4096 and 8192, T >= 4096.
#  4. torch.compile (default) where time is left.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers4.log 2>&1; cat /tmp/setup_peers4.log
FINAL=$OUT; W=/tmp/c4d; mkdir -p $W
END=$(( $(date +%s) + ${1:-320} ))
PREFIX=r4d; . scripts/device/run_measure.sh
F=fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4
B=bwd.column_task.c32.w4,bwd.column_task.c64.w4,bwd.twosum.p1x.w16.fw.pf,bwd.pair.p2x.w8.pf,bwd.pair.p1x.w8
B=$B,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf
B=$B,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
QUACK=0; grep -q "quack importable" /tmp/setup_peers4.log && QUACK=1
QUAL="--ops bwd --sessions 1 --seconds-per-unit 2 --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 8"
if [ $QUACK = 1 ]; then
  SEND=$END; END=$(( $(date +%s) + 170 ))
  run quack --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,4096,65536,1048576 --forms plain --w-dtypes fp32 \
    --programs $F,$B --peers peer.quack.heuristic,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
    --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 18
  END=$SEND
fi
SEND=$END; END=$(( $(date +%s) + 50 ))
run qsplit --H 5120,6144 --T 65536 --programs bwd.twosum_pair.p1x.w16.fw.pf.sp,bwd.twosum_pair.p2x.w8.fw.pf.sp,bwd.twosum.p2x.w8.fw.pf.sp $QUAL
END=$SEND
if [ $QUACK = 1 ]; then
  SEND=$END; END=$(( END - 40 ))
  run tuned --H 4096,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
    --programs fwd.row.r4.w4,fwd.persist.p2x.r1.w8,bwd.pair.p2x.w8.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum.p2x.w8.fw.pf \
    --peers peer.quack.tuned,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
    --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 6
  END=$SEND
fi
run compile --H 2048,4096,8192 --T 256,65536 --forms plain --w-dtypes fp32 --programs $F,$B \
  --peers peer.torch_compile.default --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 6
cd $W && tar czf $FINAL/r4d.tar.gz *.log */plan.json */*.failures.jsonl r4d-*.jsonl.gz /tmp/setup_peers4.log 2>/dev/null; ls -la $FINAL
