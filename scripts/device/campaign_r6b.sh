#!/usr/bin/env bash
# H200 campaign round 6b (session 6, 2026-12-03), right after 6a on the same warm machine. Carries
# .whlB (part two of the CUTLASS DSL wheel); without QuACK importable (the machine went cold) the
# peer runs go on with Liger alone.
#  1. smallT: plain rows, both weight dtypes, every H at T 1, 16 and 256 (the launch-bound rows the
#     T <= 256 target reads): the forward programs incl. the new 16-warp row program, the small-T
#     backward programs, QuACK heuristic and Liger; fwd, bwd, 2xfwd+bwd; accuracy qualified.
#  2. bf16-peers: BF16 weight, every H at T 65536 and 1M: the programs 6a timed fastest next to
#     QuACK and Liger (2 sessions; timing at 1M, accuracy at 65536 came with 6a).
#  3. q65k-tma: qualification at T 65536 (FP32 weight) of the `.tma` programs 6a timed fastest.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers6b.log 2>&1; cat /tmp/setup_peers6b.log
FINAL=$OUT; W=/tmp/c6b; mkdir -p $W
END=$(( $(date +%s) + ${1:-540} ))
PREFIX=r6b; . scripts/device/run_measure.sh
PEERS=peer.liger; grep -q "quack importable" /tmp/setup_peers6b.log && PEERS=peer.quack.heuristic,peer.liger
F=fwd.row.r1.w2,fwd.row.r1.w4,fwd.row.r1.w8,fwd.row.r1.w16,fwd.row.r2.w8,fwd.row.r4.w4,fwd.persist.p4x.r1.w4
F=$F,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r2.w4.pf,fwd.persist.p4x.r1.w4.pf,fwd.persist.p8x.r1.w4.pf,fwd.row.r1.w4.sp
B=bwd.column_task,bwd.twosum.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w8.fw.pf.wr,bwd.twosum_pair.p4x.w4.fw.pf.wr
SEND=$END; END=$(( END - 280 ))
run smallT --H 512,1536,2048,4096,5120,6144,8192 --T 1,256,16 --forms plain --w-dtypes fp32,bf16 \
  --programs $F,$B --peers $PEERS --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 \
  --inputs-per-family 120 --wave-units 21
END=$(( SEND - 110 ))
E6A=/tmp/c6a/bf16/evidence.jsonl; P6A=/tmp/c6a/probe-tma/evidence.jsonl
FAST=""
if [ -f $E6A ]; then
  FAST=$(for op in fwd bwd; do python3 scripts/device/pick_fastest.py $E6A --op $op --T 65536 --top 2; done \
    | awk '{print $3}' | sort -u | paste -sd,)
fi
echo "6a bf16 fastest: $FAST"
INC=bwd.twosum_pair.p8x.w2.fw.pf.wr,bwd.twosum_pair.p2x.r2.w8.fw.pf.wr,bwd.twosum_pair.p2x.w4.fw.pf
INC=$INC,bwd.twosum_pair.p1x.w16.fw.pf.wr.sp,bwd.twosum_pair.p2x.w8.fw.pf.wr.sp,bwd.twosum.p2x.w8.fw.pf
INC=$INC,fwd.row.r4.w4,fwd.row.r1.w4,fwd.persist.p4x.r1.w4,fwd.persist.p2x.r1.w8,fwd.persist.p8x.r1.w4.pf.sp
run bf16-peers --H 512,1536,2048,4096,5120,6144,8192 --T 65536,1048576 --forms plain --w-dtypes bf16 \
  --programs $INC${FAST:+,$FAST} --peers $PEERS --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 2 \
  --accuracy-max-T 1024 --large-T-inputs 0 --wave-units 14
END=$SEND
if [ -f $P6A ]; then
  python3 scripts/device/pick_fastest.py $P6A --op bwd --T 65536 --top 1 | tee $W/tma-top.txt
  Q=$(awk '$3 ~ /\.tma$/ {print $3}' $W/tma-top.txt | sort -u | paste -sd,)
  HS=$(awk '$3 ~ /\.tma$/ {print $1}' $W/tma-top.txt | sort -un | paste -sd,)
  [ -n "$Q" ] && run q65k-tma --H $HS --T 65536 --programs $Q --ops bwd --sessions 1 --seconds-per-unit 2 \
    --inputs-per-family 120 --peers none --forms plain --w-dtypes fp32 --wave-units 7
fi
cd $W && tar czf $FINAL/r6b.tar.gz *.log *.txt */plan.json */*.failures.jsonl r6b-*.jsonl.gz /tmp/setup_peers6b.log 2>/dev/null; ls -la $FINAL
