#!/usr/bin/env bash
# H200 campaign round 5b (session 5, 2026-12-03), right after 5a on the same warm machine. Carries
# .whlB (part two of the CUTLASS DSL wheel); without QuACK importable (the machine went cold) the
# peer run goes on with Liger alone.
#  1. peers: QuACK 0.6.5 heuristic and Liger next to the programs 5a's probe timed fastest (top 2 per
#     H, op and T, plus the incumbents), plain FP32 rows, every H, T 4096, 65536, 1M; fwd, bwd and
#     2xfwd+bwd, 2 sessions: the side-by-side comparison the bench reads.
#  2. q1M: qualification (120 inputs per family) at T 1M of the compensated programs 5a timed fastest
#     at H 512, 1536 and 2048 (where the wide reduce and 8 programs per SM change the winner).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers5b.log 2>&1; cat /tmp/setup_peers5b.log
FINAL=$OUT; W=/tmp/c5b; mkdir -p $W
END=$(( $(date +%s) + ${1:-530} ))
PREFIX=r5b; . scripts/device/run_measure.sh
P5A=/tmp/c5a/probe/evidence.jsonl
INC=fwd.row.r1.w4,fwd.row.r4.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.row.r1.w4.sp
INC=$INC,bwd.twosum_pair.p4x.w4.fw.pf,bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf
INC=$INC,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf,bwd.column_task.c32.w4,bwd.twosum.p1x.w16.fw.pf
FAST=""
if [ -f $P5A ]; then
  FAST=$(for T in 4096 65536 1048576; do for op in fwd bwd; do
    python3 scripts/device/pick_fastest.py $P5A --op $op --T $T --top 2; done; done | awk '{print $3}' | sort -u | paste -sd,)
  echo "5a fastest: $FAST"
fi
PEERS=peer.liger; grep -q "quack importable" /tmp/setup_peers5b.log && PEERS=peer.quack.heuristic,peer.liger
QEND=$END; END=$(( END - 170 ))
run peers --H 512,1536,2048,4096,5120,6144,8192 --T 4096,65536,1048576 --forms plain --w-dtypes fp32 \
  --programs $INC${FAST:+,$FAST} --peers $PEERS --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 11
END=$QEND
if [ -f $P5A ]; then
  for H in 512 1536 2048; do
    PROG=$(python3 scripts/device/pick_fastest.py $P5A --op bwd --T 1048576 --family twosum_pair,twosum | awk -v h=$H '$1==h {print $3}')
    [ -n "$PROG" ] && run q1m-$H --H $H --T 1048576 --programs $PROG --ops bwd --sessions 1 --seconds-per-unit 2 \
      --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 1
  done
fi
cd $W && tar czf $FINAL/r5b.tar.gz *.log */plan.json */*.failures.jsonl r5b-*.jsonl.gz /tmp/setup_peers5b.log 2>/dev/null; ls -la $FINAL
