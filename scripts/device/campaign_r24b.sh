#!/usr/bin/env bash
# Round 24b (session 28): r24a's T 1M unit again (accuracy only, strided heads BF16), which ran out
# of memory on the 80 GB H100: the accuracy pass held the reference forward's unused y (12 GiB at
# this size) and the eager reference copied x in BF16 before its FP32 buffer (12 GiB more); both are
# gone (cake_router/measure/accuracy.py, cake_kernels/reference.eager_fp32_dw), and expandable
# segments keep the freed blocks usable. Any card of sm_90a with 132 SMs.
# Usage: bash scripts/device/campaign_r24b.sh [SECONDS]
. scripts/device/accuracy_card.sh
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=r24b; . scripts/device/campaign_begin.sh ${1:-540}
A="--sessions 1 --accuracy-only --inputs-per-family 120 --peers none --ops bwd --wave-units 1"
P2=bwd.twosum_pair.p16x.r2.w1.fw.pf.wr
run q-hs-1m --H 256 --forms heads_strided --w-dtypes bf16 --T 1048576 --programs $P2.xs.wc.sr $A
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
campaign_end
