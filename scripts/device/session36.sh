#!/usr/bin/env bash
# Session 36's device calls. On an H200 (the route table's card): session35.sh's H200 queue
# (campaign_r35a.sh, campaign_r34a.sh, then session33.sh's queue).
# On another sm_90a card with 132 SMs: first the `.fw.tmc` GPU determinism tests again (they now draw
# their inputs with cake_kernels.inputs.make_inputs on the device; session 35 ran them before that
# change), then accuracy only (120 inputs per family) of the two `.fw.tmc` backwards queued for the
# H200, at the T 1M keys session 35's budget left unqualified: plain H 8192 (both weights; the peer
# target's row at 0.89x torch.compile max-autotune) and H 5120 BF16.
# Usage: bash scripts/device/session36.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in *H200*) exec bash scripts/device/session35.sh "$B" ;; esac
T0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py \
  -k "on_the_gpu_are_deterministic" > ${OUT:-.}/pytest-fw-tmc.log 2>&1
RC=$?; echo "pytest .fw.tmc rc=$RC"; grep -E "^E |passed|failed|error" ${OUT:-.}/pytest-fw-tmc.log | head -20
[ $RC = 0 ] || exit 1
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)")
[ "$SMS" = 132 ] || { echo "not 132 SMs: its accuracy would not count; nothing measured"; exit 0; }
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PREFIX=h36a; . scripts/device/campaign_begin.sh $(( B - ($(date +%s) - T0) - 10 ))
A="--ops bwd --programs bwd.twosum_pair.p1x.w8.s4.fw.wr.tmc,bwd.twosum_pair.p1x.w16.s4.fw.wr.xs.tmc"
A="$A --peers none --sessions 1 --accuracy-only --inputs-per-family 120 --wave-units 2"
run acc-8192-1m --H 8192 --forms plain --w-dtypes bf16,fp32 --T 1048576 $A
run acc-5120-1m-bf16 --H 5120 --forms plain --w-dtypes bf16 --T 1048576 $A
campaign_end
