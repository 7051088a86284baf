#!/usr/bin/env bash
# Session 35's device calls. On an H200 (the route table's card): campaign_r35a.sh (the `.fw.tmc`
# backwards at H 5120-8192, timing, 200 s), campaign_r34a.sh (the `.tmc` backwards at H 4096,
# timing, 120 s), then session33.sh's H200 queue.
# On another card (session 35 ran this in call 3, bench/results/h100-2026-12-07f): first the GPU
# tests of the `.fw.tmc` backwards (the `.tmc` kernel with its FP64 total added to the workspace row
# by atomics instead of held in registers: no spill at H 5120-8192, compile_check), which check that
# the atomics make dw bitwise the register-fold twin's, run after run;
# then, if they pass, those programs beside the routed ones and their `.tmc` twins by variant_probe.py
# at the wide rows (plain H 5120-8192, where the `.tmc` builds were 0.65-0.90x on an H100), and at the
# backward floor target's row (H 8192 BF16 T 4096).
# Usage: bash scripts/device/session35.sh [SECONDS]
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
B=${1:-540}
case "$GPU" in
  *H200*) T0=$(date +%s); bash scripts/device/campaign_r35a.sh 200; bash scripts/device/campaign_r34a.sh 120
          exec bash scripts/device/session33.sh $(( B - ($(date +%s) - T0) )) ;;
esac
T0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/cake_kernels/test_programs.py \
  -k "on_the_gpu_are_deterministic" > ${OUT:-.}/pytest-fw-tmc.log 2>&1
RC=$?; echo "pytest .fw.tmc rc=$RC"; grep -E "^E |passed|failed|error" ${OUT:-.}/pytest-fw-tmc.log | head -20
[ $RC = 0 ] || exit 1
T=bwd.twosum_pair
P=$(python3 -c "from cake_kernels import registry as r; print(','.join(n for n in r.names('bwd') if r.get(n).launch.loads == 'tma_chunks' and r.get(n).launch.fold_in == 'workspace'))")
L=$(( B - ($(date +%s) - T0) ))
K=${KEYS:-plain:8192:bf16:65536,plain:8192:fp32:65536,plain:6144:bf16:65536,plain:5120:bf16:65536,plain:8192:bf16:4096,plain:8192:bf16:16384,plain:8192:bf16:262144,plain:6144:fp32:65536,plain:5120:fp32:65536,plain:4096:bf16:65536,residual:6144:bf16:65536,plain:8192:fp32:4096}
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONPATH=$PWD timeout $(( L - 20 )) python3 scripts/device/variant_probe.py \
  --seconds $(( L - 70 )) --keys "$K" \
  --programs "$P,$T.p1x.w16.s4.wr.tmc,$T.p1x.w16.s4.wr.tmc.wc,$T.p1x.w8.s6.wr.tmc,$T.p1x.w8.s6.wr.tmc.wc" \
  --out ${PROBE_OUT:-variant-probe-fwtmc.json} 2>&1 | grep -v '^{' | tail -200
