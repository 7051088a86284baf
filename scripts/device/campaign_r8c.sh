#!/usr/bin/env bash
# H200 campaign round 8c (session 8's third call, right after r8b while the machine is warm; carries
# .whlB, so QuACK's CUTLASS DSL joins from the two parts; see setup_peers.sh).
#  1. quack: QuACK 0.6.5 heuristic and tuned (autotuned before timing) beside what the table routes,
#     plain rows, H 512-8192, BF16 weight given to ours (QuACK gets FP32 for an FP32 dw), T 65536 and 1M.
#  2. autotune: torch.compile max-autotune-no-cudagraphs beside the routed programs at more shapes.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
. scripts/device/setup_peers.sh > /tmp/setup_peers8c.log 2>&1; cat /tmp/setup_peers8c.log
FINAL=$OUT; W=/tmp/c8c; mkdir -p $W
END0=$(( $(date +%s) + ${1:-520} ))
PREFIX=r8c; . scripts/device/run_measure.sh
END=$(( END0 - ${ASECS:-170} ))
run quack --H 512,1536,2048,4096,5120,6144,8192 --forms plain --w-dtypes bf16 --T 65536,1048576 --programs routed \
  --peers peer.quack.heuristic,peer.quack.tuned --ops fwd,bwd --sessions 2 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 14
END=$END0
run autotune --H 1536,4096,6144,8192 --forms plain --w-dtypes fp32 --T 65536,4096 --programs routed \
  --peers peer.torch_compile.max_autotune --ops fwd,bwd --sessions 1 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 8
cd $W && tar czf $FINAL/r8c.tar.gz *.log */plan.json */*.failures.jsonl r8c-*.jsonl.gz 2>/dev/null; ls -la $FINAL
