#!/usr/bin/env bash
# Prepared in session 3 (2026-12-02) for the next H200 session; not yet run. Round 4b, right after
# 4a on the same warm machine: QuACK 0.6.5 (module lookup fixed after round 3c) and torch.compile
# at the peer table's points, then the residual and head forms. Carries .whlB.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers4.log 2>&1; cat /tmp/setup_peers4.log
FINAL=$OUT; W=/tmp/c4b; mkdir -p $W
END=$(( $(date +%s) + ${1:-520} ))
PREFIX=r4b; . scripts/device/run_measure.sh
P=fwd.row.r1.w4,fwd.row.r4.w4,fwd.persist.p2x.r1.w8,fwd.persist.p4x.r1.w4,bwd.column_task.c32.w4,bwd.column_task.c64.w4
P=$P,bwd.pair.p2x.w8.pf,bwd.twosum.p1x.w16.fw.pf,bwd.twosum_pair.p1x.w16.fw.pf,bwd.twosum_pair.p2x.w4.fw.pf
P=$P,bwd.twosum_pair.p2x.r2.w8.fw.pf,bwd.twosum.p2x.w8.fw.pf,bwd.twosum.p4x.w4.fw.pf
PEERT="--forms plain --w-dtypes fp32 --T 1,256,4096,65536,1048576 --programs $P --ops fwd,bwd,2xfwd+bwd --sessions 2
  --seconds-per-unit 4 --accuracy-max-T 4096 --large-T-inputs 2 --wave-units 10"
run quack --H 512,1536,2048,4096,5120,6144,8192 --peers peer.quack.heuristic $PEERT
run compiled --H 2048,4096,8192 --peers peer.torch_compile.default,peer.quack.tuned $PEERT
run forms --H 6144 --forms residual,heads_strided,heads_contiguous --w-dtypes fp32 --T coarse --programs $P \
  --peers peer.eager,peer.liger,peer.quack.heuristic --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 4 \
  --accuracy-max-T 4096 --large-T-inputs 0 --wave-units 9
cd $W && tar czf $FINAL/r4b.tar.gz *.log */plan.json */*.failures.jsonl r4b-*.jsonl.gz /tmp/setup_peers4.log 2>/dev/null; ls -la $FINAL
