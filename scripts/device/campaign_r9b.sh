#!/usr/bin/env bash
# H200 campaign round 9b (written in session 8): right after r9a while the machine is warm; carries
# .whlB so QuACK's CUTLASS DSL joins from its two parts (setup_peers.sh).
#  1. quack-tuned: QuACK 0.6.5 tuned (autotuned before timing; about 90 s per shape in round 8) and
#     heuristic beside the routed programs at four shapes, one session (tuning is per process).
#  2. autotune-1m: torch.compile max-autotune-no-cudagraphs at T 1M.
# Units are short waves (--wave-units 1), so a time-limit kill loses at most the unit in flight, and
# run_measure.sh merges what the sessions wrote.
PREFIX=r9b; . scripts/device/campaign_begin.sh
END=$(( END0 - ${ASECS:-150} ))
run quack-tuned --H 2048,6144 --forms plain --w-dtypes bf16 --T 65536,1048576 --programs routed \
  --peers peer.quack.heuristic,peer.quack.tuned --ops fwd,bwd --sessions 1 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 1
END=$END0
run autotune-1m --H 2048,8192 --forms plain --w-dtypes fp32 --T 1048576 --programs routed \
  --peers peer.torch_compile.max_autotune --ops fwd,bwd --sessions 1 --seconds-per-unit 1 \
  --inputs-per-family 0 --wave-units 1
campaign_end
