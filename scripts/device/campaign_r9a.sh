#!/usr/bin/env bash
# H200 campaign round 9a (written in session 8; not run yet): the next session's first call. Carries
# .whlA (Liger; QuACK part 1 for r9b, which must follow within 30 s while the machine is warm).
#  1. qheads: qualify the head forms where round 8 left loud spans (timing there, no accuracy: Liger's
#     backward faulted at 1,048,576 rows of 256 and ended the accuracy pass). Contiguous T 262144 and
#     1M, strided T 1M; peers none (their accuracy is not needed to route, and Liger's fault is
#     what lost it); the routed program and the multi-row one.
#  2. heads-fp32c: contiguous heads with an FP32 weight below T 65536 (round 5 measured BF16 only).
PREFIX=r9a; . scripts/device/campaign_begin.sh
TP=bwd.twosum_pair
END=$(( END0 - ${FSECS:-120} ))
run qheads-c --forms heads_contiguous --w-dtypes bf16 --T 262144,1048576 --programs $TP.p16x.w1.fw.pf.wr,$TP.p4x.r4.w2.fw.pf.wr \
  --peers none --ops bwd --sessions 2 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 1
run qheads-s --forms heads_strided --w-dtypes bf16 --T 1048576 --programs $TP.p16x.w1.fw.pf.wr \
  --peers none --ops bwd --sessions 1 --seconds-per-unit 1 --inputs-per-family 120 --wave-units 1
END=$END0
run heads-fp32c --forms heads_contiguous --w-dtypes fp32 --T 1,256,4096 --programs routed \
  --peers peer.eager,peer.liger --ops fwd,bwd,2xfwd+bwd --sessions 2 --seconds-per-unit 1 \
  --inputs-per-family 120 --wave-units 3
campaign_end
