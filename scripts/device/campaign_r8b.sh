#!/usr/bin/env bash
# H200 campaign round 8b (session 8's second call; carries .whlA: Liger, and QuACK part 1 for r8c).
#  1. heads-large2: both head forms at T 262144 (and contiguous at 1M), qualified. Round 8a's try lost
#     its accuracy pass: Liger's backward faults (illegal address) at 1,048,576 rows of 256 and the
#     sticky error ended every retry; the harness now skips a culprit when it retries a unit.
#  2. compile-large: torch.compile default at H 5120, 6144 and 8192 beside what the table routes there.
#  3. steps: `2xfwd+bwd` of every routed backward with the routed forward (steps before this round all
#     ran fwd.row.r1.w8, a forward the table routes almost nowhere), standard grid, coarse T first.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers8b.log 2>&1; cat /tmp/setup_peers8b.log
FINAL=$OUT; W=/tmp/c8b; mkdir -p $W
END0=$(( $(date +%s) + ${1:-540} ))
PREFIX=r8b; . scripts/device/run_measure.sh
TP=bwd.twosum_pair
END=$(( END0 - ${HSECS:-330} ))
run heads-large2 --forms heads_contiguous --w-dtypes bf16 --T 262144,1048576 \
  --programs $TP.p16x.w1.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr,fwd.row.r8.w4,fwd.row.r4.w2 \
  --peers peer.liger --ops fwd,bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
run heads-large3 --forms heads_strided --w-dtypes bf16 --T 262144 \
  --programs $TP.p16x.w1.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr,fwd.row.r8.w4,fwd.row.r4.w2 \
  --peers none --ops fwd,bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 2
END=$(( END0 - ${SSECS:-250} ))
run compile-large --H 5120,6144,8192 --forms plain --w-dtypes fp32,bf16 --T 4096,65536 --programs routed \
  --peers peer.torch_compile.default --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 12
END=$END0
S="--programs routed --peers none --ops 2xfwd+bwd --sessions 2 --seconds-per-unit 0.4 --inputs-per-family 0 --wave-units 40"
END=$(( $(date +%s) + 70 ))
run steps-res --forms residual --H 6144 --w-dtypes bf16,fp32 --T standard $S
END=$END0
run steps --forms plain,heads_strided,heads_contiguous --H 512,1536,2048,4096,5120,6144,8192 --w-dtypes bf16,fp32 --T standard $S
cd $W && tar czf $FINAL/r8b.tar.gz *.log */plan.json */*.failures.jsonl r8b-*.jsonl.gz 2>/dev/null; ls -la $FINAL
